// The names behind the ids of the audit trail (shared/audit/entry-subjects.ts): agents, API keys
// and OAuth clients, read for many subjects at once and only inside the reader's tenant, so an id
// of another tenant's subject (an inspect may name any agent id) never shows that subject's name.
// A subject that no longer exists has no name; its id is all the trail shows.
import {
  type AuditSubjectRef,
  isNamedSubjectKind,
  type NamedSubjectKind,
} from '../../shared/audit/entry-subjects.js';
import type { Database } from '../../storage/engine/database.js';

/** The key of a subject in the maps below. */
export function subjectKey(ref: AuditSubjectRef): string {
  return `${ref.kind}\u0000${ref.id}`;
}

/** Names of the tenant's subjects among `refs`, by subjectKey; at most one query per kind. */
export async function readSubjectNames(
  db: Database,
  tenantId: string,
  refs: readonly AuditSubjectRef[],
): Promise<Map<string, string>> {
  const ids: Record<NamedSubjectKind, Set<string>> = {
    agent: new Set(),
    api_key: new Set(),
    oauth_client: new Set(),
  };
  for (const ref of refs) if (isNamedSubjectKind(ref.kind)) ids[ref.kind].add(ref.id);
  const select = { id: true, name: true } as const;
  const where = (set: Set<string>) => ({ tenantId, id: { in: [...set] } });
  const none = Promise.resolve([] as { id: string; name: string }[]);
  const [agents, apiKeys, oauthClients] = await Promise.all([
    ids.agent.size ? db.prisma.agent.findMany({ where: where(ids.agent), select }) : none,
    ids.api_key.size ? db.prisma.apiKey.findMany({ where: where(ids.api_key), select }) : none,
    ids.oauth_client.size
      ? db.prisma.oAuthClient.findMany({ where: where(ids.oauth_client), select })
      : none,
  ]);
  const names = new Map<string, string>();
  const add = (kind: NamedSubjectKind, rows: readonly { id: string; name: string }[]) => {
    for (const row of rows) names.set(subjectKey({ kind, id: row.id }), row.name);
  };
  add('agent', agents);
  add('api_key', apiKeys);
  add('oauth_client', oauthClients);
  return names;
}

/**
 * The ids of the tenant's agents that `text` names: the agent with that id, and every agent with
 * that name (case-insensitive; names need not be unique).
 */
export async function agentIdsNamed(
  db: Database,
  tenantId: string,
  text: string,
): Promise<string[]> {
  const rows = await db.prisma.agent.findMany({
    where: { tenantId, OR: [{ id: text }, { name: { equals: text, mode: 'insensitive' } }] },
    select: { id: true },
  });
  return rows.map((row) => row.id);
}

/** Agents of the tenant whose name contains `search` or whose id starts with it, by name. */
export function searchAgents(
  db: Database,
  tenantId: string,
  search: string,
  first: number,
): Promise<{ id: string; name: string }[]> {
  const text = search.trim();
  return db.prisma.agent.findMany({
    where: {
      tenantId,
      ...(text
        ? { OR: [{ name: { contains: text, mode: 'insensitive' } }, { id: { startsWith: text } }] }
        : {}),
    },
    select: { id: true, name: true },
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
    take: first,
  });
}
