// The approval queue of the tenant: calls held by an NPL REQUIRE_HUMAN rule. List and filter
// them; approve or reject a pending, unexpired one with a reason. The decision, with the
// approver's identity, is appended to the audit trail and wakes the agent's long-poll. The
// approvalQueue subscription streams approvals as they are created and resolved, and as clients
// start and stop waiting for them (clientWaitingUntil: deciding later than that reaches nobody
// until the agent retries).

import {
  type ApprovalEvent,
  EVENT_TYPES,
  type GatewayEvent,
  mapEvents,
} from '../../../shared/events/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { maskSecrets } from '../../../shared/inspection/index.js';
import { APPROVAL_STATUSES, type ApprovalStatus } from '../../../storage/tables/approvals.js';
import { resolveApproval } from '../../services/approvals.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';
import { publishChange } from '../mutations.js';

/** Who may read the queue: approvers, and auditors (who see it but cannot decide). */
const READ_APPROVALS = [SCOPES.APPROVALS_DECIDE, SCOPES.AUDIT_READ] as const;

const STATUS_DESCRIPTIONS: Record<ApprovalStatus, string> = {
  pending: 'Waiting for a human decision, before its expiry.',
  approved: 'Approved and not yet used: the resubmitted call will pass once, before expiry.',
  rejected: 'Rejected: the resubmitted call is refused.',
  expired: 'Not decided, or approved but not used, before its expiry.',
  used: 'Approved, and the resubmitted call has passed (an approval is good for one call).',
};

const ApprovalStatusEnum = builder.enumType('ApprovalStatus', {
  description: 'Where an approval stands; a lapsed pending or approved one reads EXPIRED.',
  values: Object.fromEntries(
    APPROVAL_STATUSES.map((status) => [
      status.toUpperCase(),
      { value: status, description: STATUS_DESCRIPTIONS[status] },
    ]),
  ) as Record<Uppercase<ApprovalStatus>, { value: ApprovalStatus; description: string }>,
});

/** A pending or approved approval past its expiry reads as expired (as storage/tables/approvals.ts). */
function effectiveStatus(
  row: { status: string; expiresAt: Date },
  now = Date.now(),
): ApprovalStatus {
  const lapsed =
    (row.status === 'pending' || row.status === 'approved') && row.expiresAt.getTime() <= now;
  return lapsed ? 'expired' : (row.status as ApprovalStatus);
}

const ApprovalRef = builder.prismaObject('Approval', {
  description:
    'A tool call held by an NPL REQUIRE_HUMAN rule until an operator approves or rejects it. ' +
    'The agent resubmits the same call with the approval id once it is approved.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable id (UUID); the approval.id of the 202 answer.' }),
    status: t.field({
      type: ApprovalStatusEnum,
      description: 'Its effective status (a lapsed pending or approved approval reads EXPIRED).',
      select: { status: true, expiresAt: true },
      resolve: (approval) => effectiveStatus(approval),
    }),
    agentId: t.exposeString('agentId', { description: 'The Agent.id of the calling agent.' }),
    agent: t.relation('agent', { description: 'The calling agent.' }),
    executionId: t.exposeString('executionId', {
      description: 'The executionId the agent gave the held inspect call.',
    }),
    serverId: t.exposeString('serverId', { description: 'The MCP server the call is for.' }),
    toolName: t.exposeString('toolName', { description: 'The tool the agent wants to call.' }),
    method: t.exposeString('method', { description: 'The JSON-RPC method, e.g. tools/call.' }),
    // Nullable like every field with a scope of its own: an auditor asking for it gets null and
    // AUTH_INSUFFICIENT_SCOPE at this path, and the rest of the approval (docs/security.md).
    arguments: t.expose('arguments', {
      type: 'JSON',
      nullable: true,
      description:
        'The arguments of the call as sent, secrets included: only for approvals:decide (an ' +
        'auditor reads maskedArguments); null with AUTH_INSUFFICIENT_SCOPE otherwise.',
      authScopes: { scope: SCOPES.APPROVALS_DECIDE },
    }),
    maskedArguments: t.field({
      type: 'JSON',
      description:
        'The arguments with every secret the exfiltration detector finds (tokens, keys, JWTs, ' +
        'private keys) replaced by `[secret: <kind>]`; past the inspection limits a value reads ' +
        '`[not inspected: <limit>]`. Keys, numbers and booleans are kept.',
      select: { arguments: true },
      resolve: (approval) => maskSecrets(approval.arguments),
    }),
    callDigest: t.exposeString('callDigest', {
      description:
        'SHA-256 hex of the call (tenant, agent, server, tool, arguments): an approval only ' +
        'lets this exact call through.',
    }),
    policyUri: t.exposeString('policyUri', {
      nullable: true,
      description: 'The NPL policy whose rule held the call (svc://name@version), or null.',
    }),
    ruleId: t.exposeString('ruleId', {
      nullable: true,
      description: 'The ruleId of that rule, or null.',
    }),
    reason: t.exposeString('reason', {
      nullable: true,
      description: 'Why the call was held, as the rule explains it; or null.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the call was held.' }),
    expiresAt: t.expose('expiresAt', {
      type: 'DateTime',
      description:
        'When it lapses if not decided, or if approved but not used (the tenant policy sets ' +
        'approvalTtlSeconds).',
    }),
    decidedBy: t.exposeString('decidedBy', {
      nullable: true,
      description: 'Who decided, as api_key:{id}; null while undecided.',
    }),
    decidedAt: t.expose('decidedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it was decided; null while undecided.',
    }),
    decisionReason: t.exposeString('decisionReason', {
      nullable: true,
      description: 'The reason the operator gave with the decision, or null.',
    }),
    usedAt: t.expose('usedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the approved call passed; null until then.',
    }),
    clientWaitingUntil: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'Until when a client waits for the decision (the MCP proxy holding the call, up to the ' +
        "tenant's approvalWaitSeconds, or an approval long-poll), in any process: a decision " +
        'before then reaches it at once. Null when no client waits: the agent sees the decision ' +
        'when it retries the call. The approvalQueue subscription sends WAITING when it changes.',
      // Only live waits: a wait whose process died lapses at its `until`.
      select: () => ({
        waits: {
          where: { until: { gt: new Date() } },
          select: { until: true },
          orderBy: { until: 'desc' },
          take: 1,
        },
      }),
      resolve: (approval) => approval.waits[0]?.until ?? null,
    }),
  }),
});

function statusFilter(status: ApprovalStatus | null | undefined, now: Date) {
  switch (status) {
    case undefined:
    case null:
      return {};
    case 'pending':
    case 'approved':
      return { status, expiresAt: { gt: now } };
    case 'expired':
      return {
        OR: [
          { status: 'expired' },
          { status: { in: ['pending', 'approved'] }, expiresAt: { lte: now } },
        ],
      };
    default:
      return { status };
  }
}

builder.queryField('approvals', (t) =>
  t.prismaConnection({
    type: 'Approval',
    cursor: 'id',
    description: "Approvals of the caller's tenant, newest first; at most 100 per page.",
    authScopes: { anyScope: READ_APPROVALS },
    args: {
      status: t.arg({
        type: ApprovalStatusEnum,
        description: 'Only approvals in this effective status.',
      }),
      agentId: t.arg.id({ description: "Only this agent's approvals (an Agent.id)." }),
    },
    resolve: (query, _root, args, context) =>
      context.db.prisma.approval.findMany({
        ...query,
        where: {
          tenantId: context.caller.tenantId,
          ...(args.agentId ? { agentId: String(args.agentId) } : {}),
          ...statusFilter(args.status, new Date()),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      }),
  }),
);

builder.queryField('approval', (t) =>
  t.prismaField({
    type: 'Approval',
    nullable: true,
    description: 'One approval of the tenant; null when the tenant has none with this id.',
    authScopes: { anyScope: READ_APPROVALS },
    args: { id: t.arg.id({ required: true, description: 'The Approval.id.' }) },
    resolve: (query, _root, args, context) =>
      context.db.prisma.approval.findFirst({
        ...query,
        where: { id: String(args.id), tenantId: context.caller.tenantId },
      }),
  }),
);

for (const [field, decision] of [
  ['approveApproval', 'approved'],
  ['rejectApproval', 'rejected'],
] as const) {
  builder.mutationField(field, (t) =>
    t.prismaField({
      type: 'Approval',
      description:
        decision === 'approved'
          ? 'Approves a pending, unexpired approval: the resubmitted call passes once.'
          : 'Rejects a pending, unexpired approval: the resubmitted call is refused.',
      authScopes: { scope: SCOPES.APPROVALS_DECIDE },
      args: {
        id: t.arg.id({ required: true, description: 'The Approval.id.' }),
        reason: t.arg.string({ description: 'Why; recorded with the decision and audited.' }),
      },
      resolve: async (query, _root, args, context) => {
        const approval = await resolveApproval(
          context.db,
          context.audit,
          {
            tenantId: context.caller.tenantId,
            id: String(args.id),
            decision,
            decidedBy: actorOf(context.caller),
            reason: args.reason ?? null,
          },
          context.events,
        );
        await publishChange(context);
        return context.db.prisma.approval.findUniqueOrThrow({
          ...query,
          where: { id: approval.id },
        });
      },
    }),
  );
}

// The approval queue as a stream: each approval of the caller's tenant as it is created (by a
// held inspect call) and resolved (approved or rejected). The tenant comes from the caller's key,
// never from the client; status and agentId narrow the stream like the query's arguments.
const ApprovalEventKindEnum = builder.enumType('ApprovalEventKind', {
  description: 'What happened to the approval.',
  values: {
    CREATED: { value: 'created', description: 'A call was held: the approval is PENDING.' },
    RESOLVED: {
      value: 'resolved',
      description: 'An operator decided it: the approval is APPROVED or REJECTED.',
    },
    WAITING: {
      value: 'waiting',
      description: 'A client started or stopped waiting for the decision: see clientWaitingUntil.',
    },
  } as const,
});

const EVENT_KINDS = {
  [EVENT_TYPES.APPROVAL_CREATED]: 'created',
  [EVENT_TYPES.APPROVAL_RESOLVED]: 'resolved',
  [EVENT_TYPES.APPROVAL_WAITING]: 'waiting',
} as const;

function isApprovalEvent(event: GatewayEvent): event is ApprovalEvent {
  return Object.hasOwn(EVENT_KINDS, event.type);
}

interface ApprovalEventShape {
  readonly kind: (typeof EVENT_KINDS)[keyof typeof EVENT_KINDS];
  readonly approvalId: string;
}

const ApprovalEventRef = builder.objectRef<ApprovalEventShape>('ApprovalEvent').implement({
  description: 'An approval of the tenant was created or resolved, or a client waits for it.',
  fields: (t) => ({
    kind: t.field({
      type: ApprovalEventKindEnum,
      description: 'Created, resolved, or a change in who waits for it.',
      resolve: (event) => event.kind,
    }),
    approval: t.field({
      type: ApprovalRef,
      description: 'The approval as it is when the event is delivered.',
      resolve: (event, _args, context) =>
        context.db.prisma.approval.findFirstOrThrow({
          where: { id: event.approvalId, tenantId: context.caller.tenantId },
        }),
    }),
  }),
});

builder.subscriptionField('approvalQueue', (t) =>
  t.field({
    type: ApprovalEventRef,
    description:
      "Approvals of the caller's tenant as they are created and resolved, and when a client " +
      'starts or stops waiting for one (WAITING).',
    authScopes: { anyScope: READ_APPROVALS },
    args: {
      status: t.arg({
        type: ApprovalStatusEnum,
        description: 'Only events leaving the approval in this status (CREATED: PENDING).',
      }),
      agentId: t.arg.id({ description: "Only this agent's approvals (an Agent.id)." }),
    },
    subscribe: (_root, args, context) => {
      const tenantId = context.caller.tenantId;
      const agentId = args.agentId ? String(args.agentId) : null;
      const status = args.status ?? null;
      return mapEvents(
        context.events.subscribe(
          (event) =>
            isApprovalEvent(event) &&
            event.tenantId === tenantId &&
            (agentId === null || event.approval.agentId === agentId) &&
            (status === null || event.approval.status === status),
        ),
        (event): ApprovalEventShape | undefined =>
          isApprovalEvent(event)
            ? { kind: EVENT_KINDS[event.type], approvalId: event.approval.id }
            : undefined,
      );
    },
    resolve: (event) => event,
  }),
);
