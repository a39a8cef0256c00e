// The tenant's gateway policy: read it, and change any subset of its fields. An invalid change is
// answered as a GatewayPolicyValidationError listing every wrong field; nothing is stored then.

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

builder.prismaObject('GatewayPolicy', {
  fields: (t) => ({
    trustedServers: t.exposeStringList('trustedServers', {
      description: 'Server ids agents of the tenant may reach.',
    }),
    blockedMethods: t.exposeStringList('blockedMethods'),
    blockedTools: t.exposeStringList('blockedTools'),
    denyDestructive: t.exposeBoolean('denyDestructive'),
    destructiveToolPatterns: t.exposeStringList('destructiveToolPatterns'),
    exfilDetectSecrets: t.exposeBoolean('exfilDetectSecrets'),
    exfilBulkExportLimit: t.exposeInt('exfilBulkExportLimit', { nullable: true }),
    exfilCheckDestinations: t.exposeBoolean('exfilCheckDestinations'),
    exfilAllowedDomains: t.exposeStringList('exfilAllowedDomains'),
    oauthMode: t.exposeString('oauthMode'),
    maxDelegationDepth: t.exposeInt('maxDelegationDepth'),
    pinnedPolicies: t.exposeStringList('pinnedPolicies'),
    allowedModes: t.exposeStringList('allowedModes'),
    approvalTtlSeconds: t.exposeInt('approvalTtlSeconds'),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    updatedBy: t.exposeString('updatedBy', { nullable: true }),
  }),
});

builder.queryField('gatewayPolicy', (t) =>
  t.prismaField({
    type: 'GatewayPolicy',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.gatewayPolicy.findUniqueOrThrow({
        ...query,
        where: { tenantId: context.caller.tenantId },
      }),
  }),
);

const GatewayPolicyInput = builder.inputType('GatewayPolicyInput', {
  description: 'Fields to change; omitted fields keep their value.',
  fields: (t) => ({
    trustedServers: t.stringList(),
    blockedMethods: t.stringList(),
    blockedTools: t.stringList(),
    denyDestructive: t.boolean(),
    destructiveToolPatterns: t.stringList(),
    exfilDetectSecrets: t.boolean(),
    exfilBulkExportLimit: t.int({ description: 'null switches the bulk-export check off.' }),
    exfilCheckDestinations: t.boolean(),
    exfilAllowedDomains: t.stringList(),
    oauthMode: t.string({ description: 'none or mcp_as.' }),
    maxDelegationDepth: t.int(),
    pinnedPolicies: t.stringList({ description: 'svc://name@version pins.' }),
    allowedModes: t.stringList({ description: 'Subset of production, simulation, shadow.' }),
    approvalTtlSeconds: t.int(),
  }),
});

builder.mutationField('updateGatewayPolicy', (t) =>
  t.prismaField({
    type: 'GatewayPolicy',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    errors: { types: [GatewayPolicyValidationError] },
    args: { input: t.arg({ type: GatewayPolicyInput, required: true }) },
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
        'gateway_policy.updated',
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
