// The approval queue of the tenant: calls held by an NPL REQUIRE_HUMAN rule. List and filter
// them; approve or reject a pending, unexpired one with a reason. The decision, with the
// approver's identity, is appended to the audit trail and wakes the agent's long-poll. The
// approvalQueue subscription streams approvals as they are created and resolved.

import { SCOPES } from '../../../shared/identity/scopes.js';
import { APPROVAL_STATUSES, type ApprovalStatus } from '../../../storage/approvals.js';
import { EVENT_TYPES, mapEvents } from '../../events/index.js';
import { resolveApproval } from '../../services/approvals.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';
import { publishChange } from '../mutations.js';

const ApprovalStatusEnum = builder.enumType('ApprovalStatus', {
  values: Object.fromEntries(
    APPROVAL_STATUSES.map((status) => [status.toUpperCase(), { value: status }]),
  ) as Record<Uppercase<ApprovalStatus>, { value: ApprovalStatus }>,
});

/** A pending or approved approval past its expiry reads as expired (as storage/approvals.ts). */
function effectiveStatus(
  row: { status: string; expiresAt: Date },
  now = Date.now(),
): ApprovalStatus {
  const lapsed =
    (row.status === 'pending' || row.status === 'approved') && row.expiresAt.getTime() <= now;
  return lapsed ? 'expired' : (row.status as ApprovalStatus);
}

const ApprovalRef = builder.prismaObject('Approval', {
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.field({
      type: ApprovalStatusEnum,
      select: { status: true, expiresAt: true },
      resolve: (approval) => effectiveStatus(approval),
    }),
    agentId: t.exposeString('agentId'),
    agent: t.relation('agent'),
    executionId: t.exposeString('executionId'),
    serverId: t.exposeString('serverId'),
    toolName: t.exposeString('toolName'),
    method: t.exposeString('method'),
    arguments: t.expose('arguments', { type: 'JSON' }),
    callDigest: t.exposeString('callDigest'),
    policyUri: t.exposeString('policyUri', { nullable: true }),
    ruleId: t.exposeString('ruleId', { nullable: true }),
    reason: t.exposeString('reason', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    decidedBy: t.exposeString('decidedBy', { nullable: true }),
    decidedAt: t.expose('decidedAt', { type: 'DateTime', nullable: true }),
    decisionReason: t.exposeString('decisionReason', { nullable: true }),
    usedAt: t.expose('usedAt', { type: 'DateTime', nullable: true }),
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
    authScopes: { scope: SCOPES.APPROVALS_DECIDE },
    args: {
      status: t.arg({ type: ApprovalStatusEnum }),
      agentId: t.arg.id(),
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
    authScopes: { scope: SCOPES.APPROVALS_DECIDE },
    args: { id: t.arg.id({ required: true }) },
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
        id: t.arg.id({ required: true }),
        reason: t.arg.string({ description: 'Why; recorded with the decision and audited.' }),
      },
      resolve: async (query, _root, args, context) => {
        const approval = await resolveApproval(
          context.db,
          context.audit,
          context.approvals,
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
  values: { CREATED: { value: 'created' }, RESOLVED: { value: 'resolved' } } as const,
});

interface ApprovalEventShape {
  readonly kind: 'created' | 'resolved';
  readonly approvalId: string;
}

const ApprovalEventRef = builder.objectRef<ApprovalEventShape>('ApprovalEvent').implement({
  fields: (t) => ({
    kind: t.field({ type: ApprovalEventKindEnum, resolve: (event) => event.kind }),
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
    description: "Approvals of the caller's tenant as they are created and resolved.",
    authScopes: { scope: SCOPES.APPROVALS_DECIDE },
    args: {
      status: t.arg({
        type: ApprovalStatusEnum,
        description: 'Only events leaving the approval in this status (CREATED: PENDING).',
      }),
      agentId: t.arg.id(),
    },
    subscribe: (_root, args, context) => {
      const tenantId = context.caller.tenantId;
      const agentId = args.agentId ? String(args.agentId) : null;
      const status = args.status ?? null;
      return mapEvents(
        context.events.subscribe(
          (event) =>
            (event.type === EVENT_TYPES.APPROVAL_CREATED ||
              event.type === EVENT_TYPES.APPROVAL_RESOLVED) &&
            event.tenantId === tenantId &&
            (agentId === null || event.approval.agentId === agentId) &&
            (status === null || event.approval.status === status),
        ),
        (event): ApprovalEventShape | undefined =>
          event.type === EVENT_TYPES.AUDIT_APPENDED
            ? undefined
            : {
                kind: event.type === EVENT_TYPES.APPROVAL_CREATED ? 'created' : 'resolved',
                approvalId: event.approval.id,
              },
      );
    },
    resolve: (event) => event,
  }),
);
