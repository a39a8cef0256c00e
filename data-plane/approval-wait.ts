// Waiting for a held call's approval to be decided, shared by the approval long-poll
// (routes/approvals) and the MCP proxy's held calls (mcp-proxy/tools-call.ts). It subscribes to
// `approval.resolved` on the event bus before it reads, so a decision made in any process sharing
// the bus wakes it at once, and re-reads the row only when woken (or at the approval's expiry),
// never on a timer.
import { createEventWaiter, EVENT_TYPES, type EventBus } from '../shared/events/index.js';
import type { ApprovalId, TenantId } from '../shared/ids.js';
import type { Database } from '../storage/engine/database.js';
import { type ApprovalRecord, findApproval } from '../storage/tables/approvals.js';

export interface ApprovalWaitDependencies {
  readonly db: Database;
  readonly events: Pick<EventBus, 'subscribe'>;
}

/**
 * The approval once it is no longer pending, or as it stands when `waitMs` ends or `stop` fires;
 * undefined when there is no such approval.
 */
export async function waitForApprovalDecision(
  deps: ApprovalWaitDependencies,
  tenantId: TenantId,
  id: ApprovalId,
  waitMs: number,
  stop: AbortSignal,
): Promise<ApprovalRecord | undefined> {
  const deadline = Date.now() + waitMs;
  const decided = createEventWaiter(
    deps.events.subscribe(
      (event) =>
        event.type === EVENT_TYPES.APPROVAL_RESOLVED &&
        event.tenantId === tenantId &&
        event.approval.id === id,
    ),
  );
  try {
    let approval = await findApproval(deps.db, tenantId, id);
    while (approval?.status === 'pending' && Date.now() < deadline && !stop.aborted) {
      const until = Math.min(deadline, approval.expiresAt.getTime());
      await decided.wait(until - Date.now(), stop);
      approval = await findApproval(deps.db, tenantId, id);
    }
    return approval;
  } finally {
    await decided.close();
  }
}
