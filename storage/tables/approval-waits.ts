// Who waits for an approval's decision right now (prisma model ApprovalWait): the MCP proxy holding
// a call, or an approval long-poll, in any process sharing the database. The console shows an
// approver whether deciding still reaches a waiting client, and until when (GraphQL
// Approval.clientWaitingUntil: the latest live `until`). One row per wait, so two clients waiting
// for the same approval never clear each other's; a wait whose process died leaves a row that
// lapses at its `until` and is purged when the next wait starts.
import { randomUUID } from 'node:crypto';
import type { ApprovalId } from '../../shared/ids.js';
import type { SqlExecutor } from '../engine/database.js';

/** Records a wait for the approval lasting at most until `until`; returns the wait's id. */
export async function beginApprovalWait(
  db: SqlExecutor,
  approvalId: ApprovalId,
  until: Date,
  now = new Date(),
): Promise<string> {
  const id = randomUUID();
  await db.query(
    `with lapsed as (delete from approval_waits where until <= $4)
     insert into approval_waits (id, "approvalId", until) values ($1, $2, $3)`,
    [id, approvalId, until, now],
  );
  return id;
}

/** The wait ended (decided, timed out, the client gone, the server stopping). */
export async function endApprovalWait(db: SqlExecutor, id: string): Promise<void> {
  await db.query('delete from approval_waits where id = $1', [id]);
}
