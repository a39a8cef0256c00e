// The usage counters of limits and budgets (prisma model UsageCounter, docs/limits.md): one row per
// limit, subject and fixed window, shared by every data plane of the database. PostgreSQL (or the
// embedded PGlite) is the distributed counter: a budget is reserved with ONE conditional upsert
// whose WHERE re-reads the row under its lock (`amount + x <= maxSum`), so concurrent reservations
// from any number of processes never take the sum past the maximum, and no reservation needs a
// transaction of its own. Windows are computed from the database's clock (`now()`), so processes
// with drifting clocks agree on them. Amounts travel as decimal text and are summed as numeric.

import type { SqlExecutor } from '../engine/database.js';

/** Which counter: a limit, its subject (agent, agent and tool, or '' for the tenant) and window. */
export interface CounterKey {
  readonly tenantId: string;
  readonly limitId: string;
  /** '' for a TENANT limit. */
  readonly agentId: string;
  /** '' unless the limit counts per AGENT_TOOL. */
  readonly toolName: string;
  readonly windowSeconds: number;
}

/** A counter's values in one window, with the database's clock when they were read. */
export interface CounterReading {
  readonly calls: number;
  /** The sum, as decimal text (exact). */
  readonly amount: string;
  /** Epoch seconds. */
  readonly windowStart: number;
  /** The database's clock, epoch seconds with fractions. */
  readonly now: number;
}

interface CounterRow {
  calls: string | number;
  amount: string;
  windowStart: string | number;
  now: string | number;
}

const WINDOW = `(floor(extract(epoch from now()) / $5::int) * $5::int)::bigint`;
const KEY_COLUMNS = `"tenantId", "limitId", "agentId", "toolName", "windowStart"`;

/**
 * Reserves one call adding `amount` in the current window, unless the call would take the count
 * past `maxCalls` or the sum past `maxSum` (either null: not limited): the counter after the
 * reservation, or null when it was refused (nothing changed). With `force` the reservation is
 * made whatever it exceeds (a call a human approved).
 */
export async function reserveUsage(
  db: SqlExecutor,
  key: CounterKey,
  amount: string,
  bounds: {
    readonly maxCalls: number | null;
    readonly maxSum: string | null;
    readonly force?: boolean;
  },
): Promise<CounterReading | null> {
  const force = bounds.force === true;
  const rows = await db.query<CounterRow>(
    `insert into usage_counters (${KEY_COLUMNS}, "windowSeconds", calls, amount)
     select $1, $2, $3, $4, ${WINDOW}, $5::int, 1, $6::numeric
      where $9::boolean
         or (($7::bigint is null or 1 <= $7::bigint) and ($8::numeric is null or $6::numeric <= $8::numeric))
     on conflict (${KEY_COLUMNS}) do update
        set calls = usage_counters.calls + 1,
            amount = usage_counters.amount + excluded.amount,
            "updatedAt" = now()
      where $9::boolean
         or (($7::bigint is null or usage_counters.calls + 1 <= $7::bigint)
             and ($8::numeric is null or usage_counters.amount + excluded.amount <= $8::numeric))
     returning calls, amount::text as amount, "windowStart", extract(epoch from now()) as now`,
    [
      key.tenantId,
      key.limitId,
      key.agentId,
      key.toolName,
      key.windowSeconds,
      amount,
      bounds.maxCalls,
      bounds.maxSum,
      force,
    ],
  );
  const row = rows[0];
  return row ? toReading(row) : null;
}

/** Gives back a reservation made in the window that starts at `windowStart`. */
export async function releaseUsage(
  db: SqlExecutor,
  key: CounterKey,
  windowStart: number,
  amount: string,
): Promise<void> {
  await db.query(
    `update usage_counters set calls = greatest(calls - 1, 0), amount = amount - $6::numeric,
            "updatedAt" = now()
      where "tenantId" = $1 and "limitId" = $2 and "agentId" = $3 and "toolName" = $4
        and "windowStart" = $5`,
    [key.tenantId, key.limitId, key.agentId, key.toolName, windowStart, amount],
  );
}

/**
 * Adds `calls` counted locally by a data plane to the window starting at `windowStart`, and
 * answers the total every process has added (what the data plane's next decisions start from).
 */
export async function addCalls(
  db: SqlExecutor,
  key: CounterKey,
  windowStart: number,
  calls: number,
): Promise<CounterReading> {
  const rows = await db.query<CounterRow>(
    `insert into usage_counters (${KEY_COLUMNS}, "windowSeconds", calls)
     values ($1, $2, $3, $4, $5::bigint, $6::int, $7::bigint)
     on conflict (${KEY_COLUMNS}) do update
        set calls = usage_counters.calls + excluded.calls, "updatedAt" = now()
     returning calls, amount::text as amount, "windowStart", extract(epoch from now()) as now`,
    [key.tenantId, key.limitId, key.agentId, key.toolName, windowStart, key.windowSeconds, calls],
  );
  return toReading(rows[0] as CounterRow);
}

/** The counters of the current windows of `keys` (absent ones read as zero), in one query. */
export async function readUsage(
  db: SqlExecutor,
  keys: readonly CounterKey[],
): Promise<CounterReading[]> {
  if (keys.length === 0) return [];
  const rows = await db.query<CounterRow & { i: number }>(
    `with wanted as (
       select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
         with ordinality as k("tenantId", "limitId", "agentId", "toolName", "windowSeconds", i)
     )
     select w.i::int as i, coalesce(c.calls, 0) as calls, coalesce(c.amount, 0)::text as amount,
            (floor(extract(epoch from now()) / w."windowSeconds") * w."windowSeconds")::bigint
              as "windowStart",
            extract(epoch from now()) as now
       from wanted w
       left join usage_counters c
         on c."tenantId" = w."tenantId" and c."limitId" = w."limitId"
        and c."agentId" = w."agentId" and c."toolName" = w."toolName"
        and c."windowStart" =
            (floor(extract(epoch from now()) / w."windowSeconds") * w."windowSeconds")::bigint
      order by w.i`,
    [
      keys.map((key) => key.tenantId),
      keys.map((key) => key.limitId),
      keys.map((key) => key.agentId),
      keys.map((key) => key.toolName),
      keys.map((key) => key.windowSeconds),
    ],
  );
  return rows.map(toReading);
}

/** One agent's counters in their current windows (GraphQL Agent.usage), its tenant's included. */
export async function readAgentUsage(
  db: SqlExecutor,
  tenantId: string,
  agentId: string,
): Promise<
  (CounterReading & { limitId: string; agentId: string; toolName: string; windowSeconds: number })[]
> {
  const rows = await db.query<
    CounterRow & { limitId: string; agentId: string; toolName: string; windowSeconds: number }
  >(
    `select "limitId", "agentId", "toolName", "windowSeconds", calls, amount::text as amount,
            "windowStart", extract(epoch from now()) as now
       from usage_counters
      where "tenantId" = $1 and "agentId" in ($2, '')
        and "windowStart" = (floor(extract(epoch from now()) / "windowSeconds") * "windowSeconds")::bigint
      order by "limitId", "toolName"`,
    [tenantId, agentId],
  );
  return rows.map((row) => ({
    ...toReading(row),
    limitId: row.limitId,
    agentId: row.agentId,
    toolName: row.toolName,
    windowSeconds: Number(row.windowSeconds),
  }));
}

/** Deletes counters of windows that ended more than `keepSeconds` ago; answers how many. */
export async function purgeEndedWindows(db: SqlExecutor, keepSeconds: number): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `with gone as (
       delete from usage_counters
        where "windowStart" + "windowSeconds" < extract(epoch from now()) - $1
        returning 1)
     select count(*)::int as n from gone`,
    [keepSeconds],
  );
  return rows[0]?.n ?? 0;
}

/** N of a data plane's local allowance: the registered, unrevoked data planes, at least 1. */
export async function countDataPlanes(db: SqlExecutor): Promise<number> {
  const rows = await db.query<{ n: number }>(
    'select count(*)::int as n from data_planes where "revokedAt" is null',
  );
  return Math.max(1, rows[0]?.n ?? 1);
}

/** The database's clock, epoch seconds with fractions. */
export async function readDatabaseClock(db: SqlExecutor): Promise<number> {
  const rows = await db.query<{ now: string | number }>('select extract(epoch from now()) as now');
  return Number(rows[0]?.now);
}

function toReading(row: CounterRow): CounterReading {
  return {
    calls: Number(row.calls),
    amount: normalizeDecimal(row.amount),
    windowStart: Number(row.windowStart),
    now: Number(row.now),
  };
}

/** `100.0000000000` → `100`, `0.5000000000` → `0.5`: numeric text without trailing zeros. */
function normalizeDecimal(text: string): string {
  if (!text.includes('.')) return text;
  const trimmed = text.replace(/0+$/, '');
  return trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed;
}
