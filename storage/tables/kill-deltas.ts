// Kills as configuration-stream deltas, read from the agent_kills table: what a data plane missed
// while it was away (the control plane's catch-up on connect) or while its stream was stale (the
// data plane's own kill guard). AgentKill.seq is allocated under an advisory lock and so commits in
// seq order: "every kill after seq N" read once misses none that committed before the read.
//
// A delta carries its tenant's current signed status lists (as the fan-out re-signed them, or as
// they were when it had not yet). Lists are shared by every kill of a tenant, so a batch attaches
// them once, to the tenant's last kill in it: a data plane applies the batch in order.
import { Prisma } from '../../prisma/generated/client/client.js';
import type { AgentKillDelta } from '../../shared/config-stream/protocol.js';
import { isRecord } from '../../shared/json/is-record.js';
import type { StatusListConfig } from '../../shared/snapshot/index.js';
import type { Database } from '../engine/database.js';
import type { KillRecord } from './agent-kills.js';

/** The highest committed kill sequence (0 without kills). */
export async function readLatestKillSeq(db: Database): Promise<number> {
  const rows = await db.query<{ seq: string | null }>(
    'select max(seq)::text as seq from agent_kills',
  );
  return Number(rows[0]?.seq ?? 0);
}

/** Every kill with seq > `after`, oldest first, as deltas (at most `limit` when given). */
export async function readKillDeltasAfter(
  db: Database,
  after: number,
  options: { limit?: number } = {},
): Promise<AgentKillDelta[]> {
  const kills = await db.prisma.agentKill.findMany({
    where: { seq: { gt: BigInt(Math.max(0, Math.trunc(after))) } },
    orderBy: { seq: 'asc' },
    ...(options.limit === undefined ? {} : { take: options.limit }),
    select: {
      seq: true,
      id: true,
      tenantId: true,
      agentId: true,
      publicKey: true,
      killedAt: true,
    },
  });
  if (kills.length === 0) return [];
  const tenantIds = [...new Set(kills.map((kill) => kill.tenantId))];
  const lists = await db.prisma.statusList.findMany({
    where: { tenantId: { in: tenantIds }, credential: { not: Prisma.DbNull } },
    select: { id: true, tenantId: true, version: true, credential: true },
    orderBy: { id: 'asc' },
  });
  const listsOf = new Map<string, StatusListConfig[]>();
  for (const list of lists) {
    if (!isRecord(list.credential)) continue;
    const entry = { id: list.id, version: list.version, credential: list.credential };
    const forTenant = listsOf.get(list.tenantId);
    if (forTenant) forTenant.push(entry);
    else listsOf.set(list.tenantId, [entry]);
  }
  const lastOfTenant = new Map<string, number>();
  kills.forEach((kill, index) => {
    lastOfTenant.set(kill.tenantId, index);
  });
  return kills.map((kill, index) =>
    killDeltaOf(
      { ...kill, seq: Number(kill.seq) },
      lastOfTenant.get(kill.tenantId) === index ? (listsOf.get(kill.tenantId) ?? []) : [],
    ),
  );
}

/** The delta of a committed kill, carrying these status lists (none: the agent only). */
export function killDeltaOf(
  kill: Pick<KillRecord, 'seq' | 'id' | 'tenantId' | 'agentId' | 'publicKey' | 'killedAt'>,
  statusLists: readonly StatusListConfig[],
): AgentKillDelta {
  return {
    seq: kill.seq,
    killId: kill.id,
    tenantId: kill.tenantId,
    agentId: kill.agentId,
    publicKey: kill.publicKey,
    killedAt: kill.killedAt.toISOString(),
    statusLists,
  };
}
