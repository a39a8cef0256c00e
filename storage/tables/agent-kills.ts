// The kill switch's record (agent_kills, DESIGN.md §7): the one transaction that kills an agent and
// revokes everything it holds, and the columns later steps fill in. Both planes use it: whichever
// process receives a kill commits it here (a data plane's REST route, the control plane's
// killAgent), and the control plane's fan-out records what propagation it saw.
//
// Invariants:
// - `commitKill` takes one transaction-scoped advisory lock first, so kills commit in `seq` order
//   and a data plane resuming the kill deltas "after seq N" cannot miss one that commits later
//   with a smaller seq;
// - one kill per agent (agentId UNIQUE): killing a killed agent returns the stored kill and writes
//   nothing;
// - the lookup is tenant-scoped: another tenant's agent is not found;
// - `propagation` is written by the fan-out only, `answer`/`auditId`/`completedAt` by the
//   receiver only, each at most once (conditional UPDATEs).
import { randomUUID } from 'node:crypto';
import type { KillPropagation } from '../../shared/events/index.js';
import type { Database, SqlExecutor } from '../engine/database.js';

/** pg_advisory_xact_lock key of kill commits (an arbitrary constant: "kill" in ASCII). */
export const KILL_COMMIT_LOCK = 0x6b696c6c;
/** IdentityCredential.revokedReason of credentials a kill revoked. */
export const KILLED_CREDENTIAL_REASON = 'agent killed';
/** Approval.decidedBy of approvals a kill rejected. */
export const KILL_SWITCH_DECIDER = 'kill switch';

export interface KillCounts {
  readonly credentials: number;
  readonly delegations: number;
  readonly oauthClients: number;
  readonly tokens: number;
}

/** The answer of the REST kill and of GraphQL killAgent (docs/kill-switch.md), camelCase. */
export interface KillAnswer {
  readonly agentId: string;
  readonly publicKey: string;
  readonly killId: string;
  readonly killedAt: string;
  readonly reason: string;
  readonly revoked: KillCounts;
  readonly rejectedApprovals: number;
  readonly abortedExecutions: number;
  readonly auditId: string;
  readonly propagation: {
    readonly dataPlanes: number;
    readonly confirmed: number;
    readonly slowestMs: number | null;
    readonly confirmedBy: readonly string[];
    readonly controlPlaneReached: boolean;
  };
}

export interface KillRecord {
  readonly seq: number;
  readonly id: string;
  readonly tenantId: string;
  readonly agentId: string;
  readonly publicKey: string;
  readonly reason: string;
  readonly killedAt: Date;
  /** `api_key:<id>`. */
  readonly killedBy: string;
  /** The process that took the request. */
  readonly receivedBy: string;
  readonly revoked: KillCounts;
  readonly rejectedApprovals: number;
  readonly abortedExecutions: number | null;
  readonly propagation: KillPropagation | null;
  readonly auditId: string | null;
  readonly answer: KillAnswer | null;
  readonly completedAt: Date | null;
}

/** The agent to kill: by its `z6Mk…` public key (REST) or its id (GraphQL). */
export type KillTarget = { readonly publicKey: string } | { readonly agentId: string };

export interface CommitKillInput {
  readonly tenantId: string;
  readonly target: KillTarget;
  readonly reason: string;
  readonly killedBy: string;
  readonly receivedBy: string;
}

export type CommitKillOutcome =
  | {
      readonly created: true;
      readonly kill: KillRecord;
      /** The approvals the kill rejected (for approval.resolved events). */
      readonly rejectedApprovalIds: readonly string[];
    }
  | { readonly created: false; readonly kill: KillRecord };

interface KillRow {
  seq: string | number;
  id: string;
  tenantId: string;
  agentId: string;
  publicKey: string;
  reason: string;
  killedAt: Date;
  killedBy: string;
  receivedBy: string;
  revokedCredentials: number;
  revokedDelegations: number;
  revokedOAuthClients: number;
  revokedTokens: number;
  rejectedApprovals: number;
  abortedExecutions: number | null;
  propagation: KillPropagation | null;
  auditId: string | null;
  answer: KillAnswer | null;
  completedAt: Date | null;
}

const COLUMNS = `seq, id, "tenantId", "agentId", "publicKey", reason, "killedAt", "killedBy",
  "receivedBy", "revokedCredentials", "revokedDelegations", "revokedOAuthClients", "revokedTokens",
  "rejectedApprovals", "abortedExecutions", propagation, "auditId", answer, "completedAt"`;

/**
 * Kills the agent in one transaction (the contract's step 1): marks it killed, revokes its
 * identity credentials, the unexpired delegations it issued, its OAuth clients and its live
 * tokens, rejects its pending approvals and inserts the kill. Undefined when the tenant has no
 * such agent; `created: false` with the stored kill when it was killed before.
 */
export function commitKill(
  db: Database,
  input: CommitKillInput,
  now = new Date(),
): Promise<CommitKillOutcome | undefined> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [KILL_COMMIT_LOCK]);
    const byKey = 'publicKey' in input.target;
    const agents = await tx.query<{ id: string; publicKey: string }>(
      `select id, "publicKey" from agents
        where "tenantId" = $1 and ${byKey ? '"publicKey"' : 'id'} = $2
        order by "createdAt" asc limit 1 for update`,
      [
        input.tenantId,
        byKey
          ? (input.target as { publicKey: string }).publicKey
          : (input.target as { agentId: string }).agentId,
      ],
    );
    const agent = agents[0];
    if (agent === undefined) return undefined;
    const existing = await selectKill(tx, `"agentId" = $1`, [agent.id]);
    if (existing) return { created: false, kill: existing };
    const params = [agent.id, input.tenantId, now];
    await tx.query(
      `update agents set status = 'killed', "killedAt" = $3, "killedReason" = $4, "updatedAt" = $3
        where id = $1 and "tenantId" = $2`,
      [...params, input.reason],
    );
    const credentials = await tx.query(
      `update identity_credentials set "revokedAt" = $3, "revokedReason" = $4
        where "agentId" = $1 and "tenantId" = $2 and "revokedAt" is null returning id`,
      [...params, KILLED_CREDENTIAL_REASON],
    );
    const delegations = await tx.query(
      `update delegation_links set "revokedAt" = $3
        where "issuerAgentId" = $1 and "tenantId" = $2 and "revokedAt" is null
          and "expiresAt" > $3 returning id`,
      params,
    );
    const clients = await tx.query(
      `update oauth_clients set "revokedAt" = $3
        where "agentId" = $1 and "tenantId" = $2 and "revokedAt" is null returning id`,
      params,
    );
    const tokens = await tx.query(
      `update issued_tokens set "revokedAt" = $3
        where "agentId" = $1 and "tenantId" = $2 and "revokedAt" is null
          and "expiresAt" > $3 returning id`,
      params,
    );
    // Pending and not lapsed: a lapsed one already reads as expired and stays so.
    const approvals = await tx.query<{ id: string }>(
      `update approvals set status = 'rejected', "decidedBy" = $4, "decidedAt" = $3,
          "decisionReason" = $5
        where "agentId" = $1 and "tenantId" = $2 and status = 'pending' and "expiresAt" > $3
        returning id`,
      [...params, KILL_SWITCH_DECIDER, input.reason],
    );
    const rows = await tx.query<KillRow>(
      `insert into agent_kills (id, "tenantId", "agentId", "publicKey", reason, "killedAt",
          "killedBy", "receivedBy", "revokedCredentials", "revokedDelegations",
          "revokedOAuthClients", "revokedTokens", "rejectedApprovals")
        values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
        returning ${COLUMNS}`,
      [
        randomUUID(),
        input.tenantId,
        agent.id,
        agent.publicKey,
        input.reason,
        now,
        input.killedBy,
        input.receivedBy,
        credentials.length,
        delegations.length,
        clients.length,
        tokens.length,
        approvals.length,
      ],
    );
    return {
      created: true,
      kill: toRecord(rows[0] as KillRow),
      rejectedApprovalIds: approvals.map((row) => row.id),
    };
  });
}

/** The ids of everything a kill revoked or rejected (docs/kill-switch.md, step 4). */
export interface KillRevokedIds {
  readonly credentials: readonly string[];
  readonly delegations: readonly string[];
  readonly oauthClients: readonly string[];
  /** Access token jtis. */
  readonly tokens: readonly string[];
  readonly rejectedApprovals: readonly string[];
}

/**
 * What the kill revoked, read back by its mark: its transaction stamped every row it revoked with
 * the kill's own `killedAt` (credentials also with their reason, approvals with the kill switch
 * as decider), so any receiver — the one that committed it or the one completing it after a
 * crash — lists the same ids. Sorted, so the audit entries are reproducible.
 */
export async function listKillRevokedIds(
  db: SqlExecutor,
  kill: Pick<KillRecord, 'tenantId' | 'agentId' | 'killedAt'>,
): Promise<KillRevokedIds> {
  const params = [kill.tenantId, kill.agentId, kill.killedAt];
  const ids = async (sql: string, extra: readonly unknown[] = []) =>
    (await db.query<{ id: string }>(sql, [...params, ...extra])).map((row) => row.id);
  const [credentials, delegations, oauthClients, tokens, rejectedApprovals] = await Promise.all([
    ids(
      `select id from identity_credentials where "tenantId" = $1 and "agentId" = $2
        and "revokedAt" = $3 and "revokedReason" = $4 order by id`,
      [KILLED_CREDENTIAL_REASON],
    ),
    ids(
      `select id from delegation_links where "tenantId" = $1 and "issuerAgentId" = $2
        and "revokedAt" = $3 order by id`,
    ),
    ids(
      `select id from oauth_clients where "tenantId" = $1 and "agentId" = $2
        and "revokedAt" = $3 order by id`,
    ),
    ids(
      `select id from issued_tokens where "tenantId" = $1 and "agentId" = $2
        and "revokedAt" = $3 order by id`,
    ),
    ids(
      `select id from approvals where "tenantId" = $1 and "agentId" = $2 and status = 'rejected'
        and "decidedAt" = $3 and "decidedBy" = $4 order by id`,
      [KILL_SWITCH_DECIDER],
    ),
  ]);
  return { credentials, delegations, oauthClients, tokens, rejectedApprovals };
}

/** The kill of an agent of the tenant, if it was killed. */
export function findKillOfAgent(
  db: SqlExecutor,
  tenantId: string,
  agentId: string,
): Promise<KillRecord | undefined> {
  return selectKill(db, `"tenantId" = $1 and "agentId" = $2`, [tenantId, agentId]);
}

export function findKillBySeq(db: SqlExecutor, seq: number): Promise<KillRecord | undefined> {
  return selectKill(db, 'seq = $1', [seq]);
}

/**
 * Stores the receiver's last step: the answer, the audit entry and the aborted count. Returns the
 * stored answer: this one, or the one another receiver stored first.
 */
export async function completeKill(
  db: SqlExecutor,
  seq: number,
  answer: KillAnswer,
  now = new Date(),
): Promise<KillAnswer> {
  const rows = await db.query<{ answer: KillAnswer }>(
    `update agent_kills set answer = $2::jsonb, "auditId" = $3, "abortedExecutions" = $4,
        "completedAt" = $5
      where seq = $1 and "completedAt" is null returning answer`,
    [seq, JSON.stringify(answer), answer.auditId, answer.abortedExecutions, now],
  );
  if (rows[0]) return rows[0].answer;
  const stored = await findKillBySeq(db, seq);
  return stored?.answer ?? answer;
}

/** Records the fan-out's propagation once; false when it was recorded before. */
export async function recordKillPropagation(
  db: SqlExecutor,
  seq: number,
  propagation: KillPropagation,
): Promise<boolean> {
  const rows = await db.query(
    `update agent_kills set propagation = $2::jsonb
      where seq = $1 and propagation is null returning seq`,
    [seq, JSON.stringify(propagation)],
  );
  return rows.length > 0;
}

/** Kills no fan-out has propagated yet (committed while no control plane ran), in seq order. */
export async function listUnpropagatedKills(db: SqlExecutor): Promise<KillRecord[]> {
  const rows = await db.query<KillRow>(
    `select ${COLUMNS} from agent_kills where propagation is null order by seq asc`,
  );
  return rows.map(toRecord);
}

async function selectKill(
  db: SqlExecutor,
  where: string,
  params: readonly unknown[],
): Promise<KillRecord | undefined> {
  const rows = await db.query<KillRow>(`select ${COLUMNS} from agent_kills where ${where}`, params);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

function toRecord(row: KillRow): KillRecord {
  return {
    seq: Number(row.seq),
    id: row.id,
    tenantId: row.tenantId,
    agentId: row.agentId,
    publicKey: row.publicKey,
    reason: row.reason,
    killedAt: new Date(row.killedAt),
    killedBy: row.killedBy,
    receivedBy: row.receivedBy,
    revoked: {
      credentials: row.revokedCredentials,
      delegations: row.revokedDelegations,
      oauthClients: row.revokedOAuthClients,
      tokens: row.revokedTokens,
    },
    rejectedApprovals: row.rejectedApprovals,
    abortedExecutions: row.abortedExecutions,
    propagation: row.propagation,
    auditId: row.auditId,
    answer: row.answer,
    completedAt: row.completedAt === null ? null : new Date(row.completedAt),
  };
}
