// An operator's decision on a held call: only a pending, unexpired approval of the tenant can be
// decided, once (the conditional UPDATE in storage/tables/approvals.ts). The decision and who made it go
// to the audit trail before the answer, then `approval.resolved` goes to the event bus: it feeds
// the approvalQueue subscription and wakes the approval long-polls of every data plane.
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import { EVENT_TYPES, type EventBus } from '../../shared/events/index.js';
import { asApprovalId, asTenantId } from '../../shared/ids.js';
import type { Database } from '../../storage/engine/database.js';
import { type ApprovalRecord, decideApproval } from '../../storage/tables/approvals.js';
import type { AuditAppender } from './bootstrap.js';

export interface ResolveApprovalInput {
  readonly tenantId: string;
  readonly id: string;
  readonly decision: 'approved' | 'rejected';
  /** The approver's identity (e.g. `api_key:<id>`). */
  readonly decidedBy: string;
  readonly reason?: string | null;
}

export const MAX_DECISION_REASON_LENGTH = 2000;

export async function resolveApproval(
  db: Database,
  audit: AuditAppender,
  input: ResolveApprovalInput,
  events?: Pick<EventBus, 'publish'>,
): Promise<ApprovalRecord> {
  if (input.reason && input.reason.length > MAX_DECISION_REASON_LENGTH) {
    throw gatewayError('REQUEST_INVALID', {
      problem: `reason must be at most ${MAX_DECISION_REASON_LENGTH} characters`,
    });
  }
  // The ids arrive as the GraphQL arguments and caller carry them; branded here, where they
  // enter the approval store.
  const tenantId = asTenantId(input.tenantId);
  const outcome = await decideApproval(db, {
    tenantId,
    id: asApprovalId(input.id),
    decision: input.decision,
    decidedBy: input.decidedBy,
    reason: input.reason ?? null,
  });
  if (!outcome.ok) {
    if (outcome.reason === 'not_found') {
      throw gatewayError('APPROVAL_NOT_FOUND', { approvalId: input.id });
    }
    const status = outcome.approval?.status;
    if (status === 'expired') {
      throw gatewayError('APPROVAL_EXPIRED', { approvalId: input.id });
    }
    throw gatewayError(
      'REQUEST_INVALID',
      { problem: `approval ${input.id} is ${status}: only a pending approval can be decided` },
      { details: { status } },
    );
  }
  const approval = outcome.approval;
  await audit.append({
    tenantId,
    action:
      input.decision === 'approved'
        ? AUDIT_ACTIONS.APPROVAL_APPROVED
        : AUDIT_ACTIONS.APPROVAL_REJECTED,
    resourceType: 'approval',
    resourceId: approval.id,
    metadata: {
      actorType: 'operator',
      decidedBy: input.decidedBy,
      decision: input.decision,
      reason: input.reason ?? null,
      agentId: approval.agentId,
      serverId: approval.serverId,
      tool: approval.toolName,
    },
  });
  events?.publish({
    type: EVENT_TYPES.APPROVAL_RESOLVED,
    tenantId,
    approval: { id: approval.id, agentId: approval.agentId, status: approval.status },
  });
  return approval;
}
