// What someone with the database's superuser rights can do to an audit trail, for the tests that
// show the signed checkpoints catch it: rewrite the chain without some entries (every later hash
// and seal recomputed, so the chain alone is whole again) and store that in place of the trail,
// and cut its newest entries off with the head moved back. Neither is possible for the gateway's
// own role: the append-only triggers refuse UPDATE and DELETE, so they are switched off around the
// change, as a superuser could.
import { type AuditEntry, chainEntry } from '../../shared/audit/index.js';
import type { SqlExecutor } from '../../storage/engine/database.js';

/** The entries without those `drop` selects, chained again from genesis with chainEntry. */
export function rechainWithout(
  entries: readonly AuditEntry[],
  drop: (entry: AuditEntry) => boolean,
): AuditEntry[] {
  const out: AuditEntry[] = [];
  let prev: string | null = null;
  for (const entry of entries) {
    if (drop(entry)) continue;
    const next = chainEntry({ ...entry, metadata: entry.metadata ?? {} }, prev);
    out.push(next);
    prev = next.hash;
  }
  return out;
}

/** Runs `change` with the audit tables' append-only triggers off. */
export async function asSuperuser(db: SqlExecutor, change: () => Promise<void>): Promise<void> {
  await db.query('alter table audit_entries disable trigger user');
  try {
    await change();
  } finally {
    await db.query('alter table audit_entries enable trigger user');
  }
}

/** Removes the tenant's entries after `keep` and moves its chain head back to entry `keep`. */
export async function truncateTrail(
  db: SqlExecutor,
  tenantId: string,
  keep: number,
): Promise<void> {
  const [kept] = await db.query<{ hash: string }>(
    'select hash from audit_entries where "tenantId" = $1 and seq = $2',
    [tenantId, keep],
  );
  if (kept === undefined) throw new Error(`tenant ${tenantId} has no entry ${keep}`);
  await asSuperuser(db, async () => {
    await db.query('delete from audit_entries where "tenantId" = $1 and seq > $2', [
      tenantId,
      keep,
    ]);
    await db.query('update audit_chain_heads set seq = $2, hash = $3 where "tenantId" = $1', [
      tenantId,
      keep,
      kept.hash,
    ]);
  });
}

/**
 * Stores `rewritten` as the tenant's trail in place of `original`: entries it left out are
 * deleted, the others rewritten in its order (seq, hash, prevHash, seal), new ones inserted, and
 * the chain head moved to its last entry.
 */
export async function storeRewrittenTrail(
  db: SqlExecutor,
  tenantId: string,
  original: readonly AuditEntry[],
  rewritten: readonly AuditEntry[],
): Promise<void> {
  const kept = new Set(rewritten.map((entry) => entry.id));
  const existing = new Set(original.map((entry) => entry.id));
  await asSuperuser(db, async () => {
    for (const entry of original) {
      if (!kept.has(entry.id)) {
        await db.query('delete from audit_entries where "tenantId" = $1 and id = $2', [
          tenantId,
          entry.id,
        ]);
      }
    }
    for (const [index, entry] of rewritten.entries()) {
      const prevHash = entry.prevHash ?? '0'.repeat(64);
      if (existing.has(entry.id)) {
        await db.query(
          `update audit_entries set seq = $3, hash = $4, "prevHash" = $5, "after" = $6
           where "tenantId" = $1 and id = $2`,
          [tenantId, entry.id, index + 1, entry.hash, prevHash, entry.after],
        );
      } else {
        await db.query(
          `insert into audit_entries (id, "tenantId", seq, action, "resourceType", "resourceId",
             metadata, "after", "createdAt", hash, "prevHash")
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          [
            entry.id,
            tenantId,
            index + 1,
            entry.action,
            entry.resourceType,
            entry.resourceId,
            JSON.stringify(entry.metadata ?? {}),
            entry.after,
            entry.createdAt,
            entry.hash,
            prevHash,
          ],
        );
      }
    }
    const head = rewritten.at(-1);
    await db.query('update audit_chain_heads set seq = $2, hash = $3 where "tenantId" = $1', [
      tenantId,
      rewritten.length,
      head?.hash ?? '0'.repeat(64),
    ]);
  });
}
