// The tenant's gateway policy: read it, and change any subset of its fields. An invalid change is
// answered as a GatewayPolicyValidationError listing every wrong field; nothing is stored then.

import { AUDIT_ACTIONS } from '../../../shared/audit/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import {
  type GatewayPolicyPatch,
  updateGatewayPolicy,
  validateGatewayPolicyPatch,
} from '../../services/gateway-policy.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';
import { auditOperatorAction, publishChange } from '../mutations.js';
import { GatewayPolicyValidationError } from './errors.js';

// Descriptions shared by the policy's fields and the input that changes them.
const FIELD = {
  trustedServers:
    'Server ids (the {serverId} of mcp://{serverId}) agents of the tenant may reach; a call ' +
    'to any other server is denied.',
  blockedMethods: 'JSON-RPC methods refused for every agent: exact names or `*` globs.',
  blockedTools: 'Tool names refused for every agent: exact names or `*` globs.',
  denyDestructive:
    "Whether calls to destructive tools (destructiveToolPatterns, the upstream's " +
    'destructiveHint, destructive SQL or shell) are denied.',
  destructiveToolPatterns:
    'Tool-name words treated as destructive (`*` globs allowed); this is the whole list.',
  exfilDetectSecrets:
    'Whether arguments carrying secrets (private keys, cloud keys, tokens) are denied.',
  exfilBulkExportLimit:
    'A call asking for more items than this (limit, pageSize, $top…) is a bulk export and ' +
    'is denied; null switches the check off.',
  exfilCheckDestinations:
    'Whether URLs and email addresses in arguments must be in exfilAllowedDomains.',
  exfilAllowedDomains: 'Domains destinations may go to; each allows itself and its subdomains.',
  oauthMode: 'How agents authenticate to MCP servers: none, or mcp_as (the gateway issues tokens).',
  maxDelegationDepth: 'Longest delegation chain accepted, 0-16 links.',
  requireAgentIdentity:
    "Whether every inspect must present the agent's identity credential (and its delegation " +
    'chain, for a delegate) with an Agent-Proof header: without them the call is refused ' +
    '(401 AGENT_IDENTITY_REQUIRED). Default false, a documented deviation from spec §5.5 until ' +
    "agents' clients present credentials.",
  pinnedPolicies: 'NPL policies evaluated on every inspect of the tenant, as svc://name@version.',
  allowedModes: 'Execution modes agents may request: a subset of production, simulation, shadow.',
  approvalTtlSeconds:
    'Seconds a held call waits for a human decision before it expires, 10-604800 (7 days).',
  toolPinning:
    'Tool-definition pinning (docs/tool-pinning.md): first_sight (default; the first ' +
    'definition seen of a tool is pinned, a later change is held until approved) or ' +
    'approved_only (no tool is callable until an operator approves its definition).',
  approvalWaitSeconds:
    'Seconds the MCP proxy keeps a tools/call that needs approval open, waiting for the ' +
    'decision, 0-3600 (default 120); past it the client gets APPROVAL_PENDING.',
  proxyExecutionMode:
    'Execution mode of MCP proxy calls of agents without their own executionMode: ' +
    'production (default), simulation or shadow.',
  proxyModeHeader:
    'Whether an MCP proxy client may choose the execution mode with an X-Execution-Mode ' +
    'header (one of allowedModes). Default false.',
} as const;

builder.prismaObject('GatewayPolicy', {
  description:
    "The tenant's gateway policy: the checks every inspect applies before the NPL policies.",
  fields: (t) => ({
    trustedServers: t.exposeStringList('trustedServers', { description: FIELD.trustedServers }),
    blockedMethods: t.exposeStringList('blockedMethods', { description: FIELD.blockedMethods }),
    blockedTools: t.exposeStringList('blockedTools', { description: FIELD.blockedTools }),
    denyDestructive: t.exposeBoolean('denyDestructive', { description: FIELD.denyDestructive }),
    destructiveToolPatterns: t.exposeStringList('destructiveToolPatterns', {
      description: FIELD.destructiveToolPatterns,
    }),
    exfilDetectSecrets: t.exposeBoolean('exfilDetectSecrets', {
      description: FIELD.exfilDetectSecrets,
    }),
    exfilBulkExportLimit: t.exposeInt('exfilBulkExportLimit', {
      nullable: true,
      description: FIELD.exfilBulkExportLimit,
    }),
    exfilCheckDestinations: t.exposeBoolean('exfilCheckDestinations', {
      description: FIELD.exfilCheckDestinations,
    }),
    exfilAllowedDomains: t.exposeStringList('exfilAllowedDomains', {
      description: FIELD.exfilAllowedDomains,
    }),
    oauthMode: t.exposeString('oauthMode', { description: FIELD.oauthMode }),
    maxDelegationDepth: t.exposeInt('maxDelegationDepth', {
      description: FIELD.maxDelegationDepth,
    }),
    requireAgentIdentity: t.exposeBoolean('requireAgentIdentity', {
      description: FIELD.requireAgentIdentity,
    }),
    pinnedPolicies: t.exposeStringList('pinnedPolicies', { description: FIELD.pinnedPolicies }),
    allowedModes: t.exposeStringList('allowedModes', { description: FIELD.allowedModes }),
    approvalTtlSeconds: t.exposeInt('approvalTtlSeconds', {
      description: FIELD.approvalTtlSeconds,
    }),
    toolPinning: t.exposeString('toolPinning', { description: FIELD.toolPinning }),
    approvalWaitSeconds: t.exposeInt('approvalWaitSeconds', {
      description: FIELD.approvalWaitSeconds,
    }),
    proxyExecutionMode: t.exposeString('proxyExecutionMode', {
      description: FIELD.proxyExecutionMode,
    }),
    proxyModeHeader: t.exposeBoolean('proxyModeHeader', { description: FIELD.proxyModeHeader }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
    updatedBy: t.exposeString('updatedBy', {
      nullable: true,
      description: 'Who changed it last, as api_key:{id}; null when unknown.',
    }),
  }),
});

builder.queryField('gatewayPolicy', (t) =>
  t.prismaField({
    type: 'GatewayPolicy',
    description: "The caller's tenant's gateway policy.",
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.gatewayPolicy.findUniqueOrThrow({
        ...query,
        where: { tenantId: context.caller.tenantId },
      }),
  }),
);

const GatewayPolicyInput = builder.inputType('GatewayPolicyInput', {
  description: 'Fields to change; omitted fields keep their value. Lists replace the whole list.',
  fields: (t) => ({
    trustedServers: t.stringList({ description: FIELD.trustedServers }),
    blockedMethods: t.stringList({ description: FIELD.blockedMethods }),
    blockedTools: t.stringList({ description: FIELD.blockedTools }),
    denyDestructive: t.boolean({ description: FIELD.denyDestructive }),
    destructiveToolPatterns: t.stringList({ description: FIELD.destructiveToolPatterns }),
    exfilDetectSecrets: t.boolean({ description: FIELD.exfilDetectSecrets }),
    exfilBulkExportLimit: t.int({
      description:
        'A positive limit (see GatewayPolicy.exfilBulkExportLimit); null switches the check off.',
    }),
    exfilCheckDestinations: t.boolean({ description: FIELD.exfilCheckDestinations }),
    exfilAllowedDomains: t.stringList({ description: FIELD.exfilAllowedDomains }),
    oauthMode: t.string({ description: FIELD.oauthMode }),
    maxDelegationDepth: t.int({ description: FIELD.maxDelegationDepth }),
    requireAgentIdentity: t.boolean({ description: FIELD.requireAgentIdentity }),
    pinnedPolicies: t.stringList({ description: FIELD.pinnedPolicies }),
    allowedModes: t.stringList({ description: FIELD.allowedModes }),
    approvalTtlSeconds: t.int({ description: FIELD.approvalTtlSeconds }),
    toolPinning: t.string({ description: FIELD.toolPinning }),
    approvalWaitSeconds: t.int({ description: FIELD.approvalWaitSeconds }),
    proxyExecutionMode: t.string({ description: FIELD.proxyExecutionMode }),
    proxyModeHeader: t.boolean({ description: FIELD.proxyModeHeader }),
  }),
});

builder.mutationField('updateGatewayPolicy', (t) =>
  t.prismaField({
    type: 'GatewayPolicy',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    description:
      'Changes any subset of the gateway policy. An invalid change is answered as ' +
      'GatewayPolicyValidationError listing every wrong field, and nothing is stored.',
    errors: {
      types: [GatewayPolicyValidationError],
      union: { description: 'The updated policy, or why the change was refused.' },
      result: { description: 'The change was stored and published.' },
      dataField: { description: 'The policy after the change.' },
    },
    args: {
      input: t.arg({ type: GatewayPolicyInput, required: true, description: 'What to change.' }),
    },
    resolve: async (query, _root, { input }, context) => {
      // An explicit null means "unchanged" everywhere except the bulk-export limit (null = off).
      const patch = Object.fromEntries(
        Object.entries(input).filter(
          ([field, value]) =>
            value !== undefined && (value !== null || field === 'exfilBulkExportLimit'),
        ),
      ) as GatewayPolicyPatch;
      const issues = validateGatewayPolicyPatch(patch);
      if (issues.length > 0) throw new GatewayPolicyValidationError(issues);
      const tenantId = context.caller.tenantId;
      await updateGatewayPolicy(context.db, tenantId, patch, actorOf(context.caller));
      await auditOperatorAction(
        context,
        AUDIT_ACTIONS.GATEWAY_POLICY_UPDATED,
        { type: 'gateway_policy', id: tenantId },
        { fields: Object.keys(patch) },
      );
      await publishChange(context);
      return context.db.prisma.gatewayPolicy.findUniqueOrThrow({
        ...selectingSomeColumn(query),
        where: { tenantId },
      });
    },
  }),
);

/**
 * The query with at least one column. When the result union is answered without any column of
 * the policy (only `__typename`, or a success member whose `data` is not selected), Pothos plans
 * `{ select: {} }`, and Prisma refuses an empty `select`: the primary key then stands in.
 */
function selectingSomeColumn<Query extends { select?: object }>(
  query: Query,
): Query | { select: { tenantId: true } } {
  return query.select && Object.keys(query.select).length === 0
    ? { select: { tenantId: true } }
    : query;
}
