// The approval queue (spec §3.2, DESIGN.md §4). A call held by REQUIRE_HUMAN is stored with the
// digest of exactly that call; an operator approves or rejects it; the agent's resubmission with
// the approval id passes once. Every transition is one conditional UPDATE, so two concurrent
// resubmissions cannot both use an approval and a decision cannot land on an expired or already
// decided one, in one process or many. Rows come back with branded ids: reading a row is the edge.
// An id no row can have (one holding NUL or an unpaired surrogate, which PostgreSQL text cannot
// store) is not found without a query; the held call's text is stored in the storable encoding
// (shared/text/storable-text.ts), so arguments holding NUL are held like any others.
import { randomUUID } from 'node:crypto';
import type { AgentId, ApprovalId, ServerId, TenantId } from '../../shared/ids.js';
import {
  encodeStorableJson,
  encodeStorableText,
  isStorableText,
} from '../../shared/text/storable-text.js';
import type { SqlExecutor } from '../engine/database.js';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'used'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export interface ApprovalRecord {
  readonly id: ApprovalId;
  readonly tenantId: TenantId;
  readonly agentId: AgentId;
  readonly executionId: string;
  readonly serverId: ServerId;
  readonly toolName: string;
  readonly method: string;
  readonly callDigest: string;
  readonly arguments: unknown;
  readonly policyUri: string | null;
  readonly ruleId: string | null;
  readonly reason: string | null;
  /** Effective status: a pending or approved approval past its expiry reads as `expired`. */
  readonly status: ApprovalStatus;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly decidedBy: string | null;
  readonly decidedAt: Date | null;
  readonly decisionReason: string | null;
  readonly usedAt: Date | null;
  /** A call a usage limit held: the limit and the usage that triggered it; null for NPL holds. */
  readonly limitHit: Readonly<Record<string, unknown>> | null;
}

/** The held call as the data plane stores it; id, status and times are the store's. */
export type CreateApprovalInput = Pick<
  ApprovalRecord,
  | 'tenantId'
  | 'agentId'
  | 'executionId'
  | 'serverId'
  | 'toolName'
  | 'method'
  | 'callDigest'
  | 'arguments'
  | 'policyUri'
  | 'ruleId'
  | 'reason'
> & { readonly ttlMs: number; readonly limitHit?: Readonly<Record<string, unknown>> | null };

interface ApprovalRow extends Omit<ApprovalRecord, 'status'> {
  readonly status: string;
}

const COLUMNS = `id, "tenantId", "agentId", "executionId", "serverId", "toolName", method,
  "callDigest", arguments, "policyUri", "ruleId", reason, status, "createdAt", "expiresAt",
  "decidedBy", "decidedAt", "decisionReason", "usedAt", "limitHit"`;

export async function createApproval(
  db: SqlExecutor,
  input: CreateApprovalInput,
  now = new Date(),
): Promise<ApprovalRecord> {
  const rows = await db.query<ApprovalRow>(
    `insert into approvals (id, "tenantId", "agentId", "executionId", "serverId", "toolName",
       method, "callDigest", arguments, "policyUri", "ruleId", reason, status, "createdAt",
       "expiresAt", "limitHit")
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, 'pending', $13, $14,
       $15::jsonb)
     returning ${COLUMNS}`,
    [
      randomUUID(),
      input.tenantId,
      input.agentId,
      encodeStorableText(input.executionId),
      encodeStorableText(input.serverId),
      encodeStorableText(input.toolName),
      encodeStorableText(input.method),
      input.callDigest,
      JSON.stringify(encodeStorableJson(input.arguments ?? {})),
      input.policyUri,
      input.ruleId,
      input.reason === null ? null : encodeStorableText(input.reason),
      now,
      new Date(now.getTime() + input.ttlMs),
      input.limitHit ? JSON.stringify(input.limitHit) : null,
    ],
  );
  return toRecord(rows[0] as ApprovalRow, now);
}

export async function findApproval(
  db: SqlExecutor,
  tenantId: TenantId,
  id: ApprovalId,
  now = new Date(),
): Promise<ApprovalRecord | undefined> {
  if (!isStorableText(id)) return undefined;
  const rows = await db.query<ApprovalRow>(
    `select ${COLUMNS} from approvals where "tenantId" = $1 and id = $2`,
    [tenantId, id],
  );
  return rows[0] ? toRecord(rows[0], now) : undefined;
}

/**
 * The newest approval of this agent for the same call (digest) that can still let it through:
 * pending or approved, unexpired. The MCP proxy resumes it when a client retries a call whose wait
 * ended, instead of asking an operator twice for the same call.
 */
export async function findOpenApproval(
  db: SqlExecutor,
  input: { tenantId: TenantId; agentId: AgentId; callDigest: string },
  now = new Date(),
): Promise<ApprovalRecord | undefined> {
  const rows = await db.query<ApprovalRow>(
    `select ${COLUMNS} from approvals
      where "tenantId" = $1 and "agentId" = $2 and "callDigest" = $3
        and status in ('pending', 'approved') and "expiresAt" > $4
      order by "createdAt" desc limit 1`,
    [input.tenantId, input.agentId, input.callDigest, now],
  );
  return rows[0] ? toRecord(rows[0], now) : undefined;
}

export type ConsumeOutcome =
  | { readonly ok: true; readonly approval: ApprovalRecord }
  | {
      readonly ok: false;
      readonly code:
        | 'APPROVAL_NOT_FOUND'
        | 'APPROVAL_PENDING'
        | 'APPROVAL_REJECTED'
        | 'APPROVAL_EXPIRED'
        | 'APPROVAL_MISMATCH'
        | 'APPROVAL_ALREADY_USED';
      readonly approval?: ApprovalRecord;
    };

/**
 * Lets the resubmitted call through once: only an approved, unexpired approval of the same
 * tenant and agent whose digest equals the resubmitted call's. The agent check matters: an
 * approval id leaked to another agent of the tenant must not let that agent's call through.
 */
export async function consumeApproval(
  db: SqlExecutor,
  input: { tenantId: TenantId; agentId: AgentId; id: ApprovalId; callDigest: string },
  now = new Date(),
): Promise<ConsumeOutcome> {
  if (!isStorableText(input.id)) return { ok: false, code: 'APPROVAL_NOT_FOUND' };
  const used = await db.query<ApprovalRow>(
    `update approvals set status = 'used', "usedAt" = $5
      where "tenantId" = $1 and id = $2 and "agentId" = $3 and "callDigest" = $4
        and status = 'approved' and "expiresAt" > $5
      returning ${COLUMNS}`,
    [input.tenantId, input.id, input.agentId, input.callDigest, now],
  );
  if (used[0]) return { ok: true, approval: toRecord(used[0], now) };
  const approval = await findApproval(db, input.tenantId, input.id, now);
  if (!approval || approval.agentId !== input.agentId) {
    return { ok: false, code: 'APPROVAL_NOT_FOUND' };
  }
  if (approval.status === 'used') return { ok: false, code: 'APPROVAL_ALREADY_USED', approval };
  if (approval.status === 'rejected') return { ok: false, code: 'APPROVAL_REJECTED', approval };
  if (approval.status === 'expired') return { ok: false, code: 'APPROVAL_EXPIRED', approval };
  if (approval.callDigest !== input.callDigest) {
    return { ok: false, code: 'APPROVAL_MISMATCH', approval };
  }
  return { ok: false, code: 'APPROVAL_PENDING', approval };
}

export type DecideOutcome =
  | { readonly ok: true; readonly approval: ApprovalRecord }
  | {
      readonly ok: false;
      readonly reason: 'not_found' | 'not_pending';
      readonly approval?: ApprovalRecord;
    };

/** An operator's decision: only a pending, unexpired approval can be decided, and only once. */
export async function decideApproval(
  db: SqlExecutor,
  input: {
    tenantId: TenantId;
    id: ApprovalId;
    decision: 'approved' | 'rejected';
    decidedBy: string;
    reason?: string | null;
  },
  now = new Date(),
): Promise<DecideOutcome> {
  if (!isStorableText(input.id)) return { ok: false, reason: 'not_found' };
  const rows = await db.query<ApprovalRow>(
    `update approvals set status = $3, "decidedBy" = $4, "decidedAt" = $5, "decisionReason" = $6
      where "tenantId" = $1 and id = $2 and status = 'pending' and "expiresAt" > $5
      returning ${COLUMNS}`,
    [
      input.tenantId,
      input.id,
      input.decision,
      input.decidedBy,
      now,
      input.reason == null ? null : encodeStorableText(input.reason),
    ],
  );
  if (rows[0]) return { ok: true, approval: toRecord(rows[0], now) };
  const approval = await findApproval(db, input.tenantId, input.id, now);
  return approval
    ? { ok: false, reason: 'not_pending', approval }
    : { ok: false, reason: 'not_found' };
}

function toRecord(row: ApprovalRow, now: Date): ApprovalRecord {
  const expired =
    (row.status === 'pending' || row.status === 'approved') &&
    new Date(row.expiresAt).getTime() <= now.getTime();
  return {
    ...row,
    createdAt: new Date(row.createdAt),
    expiresAt: new Date(row.expiresAt),
    decidedAt: row.decidedAt ? new Date(row.decidedAt) : null,
    usedAt: row.usedAt ? new Date(row.usedAt) : null,
    status: expired ? 'expired' : (row.status as ApprovalStatus),
  };
}
