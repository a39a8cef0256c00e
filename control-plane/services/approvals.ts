// An operator's decision on a held call: only a pending, unexpired approval of the tenant can be
// decided, once (the conditional UPDATE in storage/approvals.ts). The decision and who made it go
// to the audit trail before the answer, long-polls waiting on the approval wake at once, and
// `approval.resolved` goes to the event bus (the approvalQueue subscription).
import { GatewayError } from '../../shared/errors/index.js';
import { type ApprovalRecord, decideApproval } from '../../storage/approvals.js';
import type { Database } from '../../storage/database.js';
import { EVENT_TYPES, type EventBus } from '../events/index.js';
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
  notifier: { notify(id: string): void },
  input: ResolveApprovalInput,
  events?: Pick<EventBus, 'publish'>,
): Promise<ApprovalRecord> {
  if (input.reason && input.reason.length > MAX_DECISION_REASON_LENGTH) {
    throw new GatewayError(
      'REQUEST_INVALID',
      `reason must be at most ${MAX_DECISION_REASON_LENGTH} characters`,
    );
  }
  const outcome = await decideApproval(db, {
    tenantId: input.tenantId,
    id: input.id,
    decision: input.decision,
    decidedBy: input.decidedBy,
    reason: input.reason ?? null,
  });
  if (!outcome.ok) {
    if (outcome.reason === 'not_found') {
      throw new GatewayError('APPROVAL_NOT_FOUND', `approval ${input.id} not found`);
    }
    const status = outcome.approval?.status;
    if (status === 'expired') {
      throw new GatewayError('APPROVAL_EXPIRED', `approval ${input.id} has expired`);
    }
    throw new GatewayError(
      'REQUEST_INVALID',
      `approval ${input.id} is ${status}: only a pending approval can be decided`,
      { details: { status } },
    );
  }
  const approval = outcome.approval;
  await audit.append({
    tenantId: input.tenantId,
    action: input.decision === 'approved' ? 'approval.approved' : 'approval.rejected',
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
  notifier.notify(approval.id);
  events?.publish({
    type: EVENT_TYPES.APPROVAL_RESOLVED,
    tenantId: input.tenantId,
    approval: { id: approval.id, agentId: approval.agentId, status: approval.status },
  });
  return approval;
}
