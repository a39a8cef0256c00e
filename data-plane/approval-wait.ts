// Waiting for a held call's approval to be decided, shared by the approval long-poll
// (routes/approvals) and the MCP proxy's held calls (mcp-proxy/tools-call.ts). It subscribes to
// `approval.resolved` on the event bus before it reads, so a decision made in any process sharing
// the bus wakes it at once, and re-reads the row only when woken (or at the approval's expiry),
// never on a timer.
//
// While it waits for a pending approval, the wait is recorded in the database (approval_waits,
// with the latest time it waits until) and `approval.waiting` is published when it starts and
// when it ends: the console shows an approver, in any process, whether a client still waits for
// the decision and until when. Its length is observed in agent_gateway_approval_wait_seconds,
// apart from the gateway's own decision time (agent_gateway_inspect_duration_seconds): a human's
// minutes are not latency.
import { createEventWaiter, EVENT_TYPES, type EventBus } from '../shared/events/index.js';
import type { ApprovalId, TenantId } from '../shared/ids.js';
import type { Database } from '../storage/engine/database.js';
import { beginApprovalWait, endApprovalWait } from '../storage/tables/approval-waits.js';
import { type ApprovalRecord, findApproval } from '../storage/tables/approvals.js';
import type { GatewayMetrics } from './metrics/gateway-metrics.js';

export interface ApprovalWaitDependencies {
  readonly db: Database;
  readonly events: Pick<EventBus, 'subscribe' | 'publish'>;
  readonly metrics: Pick<GatewayMetrics, 'approvalWait'>;
}

/** Who waits: the MCP proxy holding a call, or an agent's long-poll (the metric's `source`). */
export type ApprovalWaitSource = 'mcp_proxy' | 'long_poll';

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
  source: ApprovalWaitSource,
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
  let wait: string | undefined;
  let waitStarted = 0;
  let approval: ApprovalRecord | undefined;
  try {
    approval = await findApproval(deps.db, tenantId, id);
    if (approval?.status === 'pending' && Date.now() < deadline && !stop.aborted) {
      waitStarted = performance.now();
      const until = new Date(Math.min(deadline, approval.expiresAt.getTime()));
      wait = await beginApprovalWait(deps.db, id, until);
      announce(deps, approval);
    }
    while (approval?.status === 'pending' && Date.now() < deadline && !stop.aborted) {
      const until = Math.min(deadline, approval.expiresAt.getTime());
      await decided.wait(until - Date.now(), stop);
      approval = await findApproval(deps.db, tenantId, id);
    }
    return approval;
  } finally {
    await decided.close();
    if (wait !== undefined && approval) {
      deps.metrics.approvalWait.observe(
        { source, outcome: outcomeOf(approval, stop) },
        (performance.now() - waitStarted) / 1000,
      );
      // A row this fails to delete (the database gone) lapses at its `until` by itself.
      await endApprovalWait(deps.db, wait).catch(() => {});
      announce(deps, approval);
    }
  }
}

/** How the wait ended, from the approval as last read: decided, or not (and why not). */
function outcomeOf(approval: ApprovalRecord, stop: AbortSignal): string {
  switch (approval.status) {
    case 'approved':
    case 'used':
      return 'approved';
    case 'rejected':
    case 'expired':
      return approval.status;
    case 'pending':
      return stop.aborted ? 'abandoned' : 'timed_out';
  }
}

/** `approval.waiting`: subscribers re-read Approval.clientWaitingUntil. */
function announce(deps: ApprovalWaitDependencies, approval: ApprovalRecord): void {
  deps.events.publish({
    type: EVENT_TYPES.APPROVAL_WAITING,
    tenantId: approval.tenantId,
    approval: { id: approval.id, agentId: approval.agentId, status: approval.status },
  });
}
