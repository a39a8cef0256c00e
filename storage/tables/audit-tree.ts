// Each tenant's Merkle tree over its audit chain (shared/tlog/merkle.ts), stored as its complete
// subtrees (audit_tree_nodes) and its size (audit_trees). The tree grows behind the chain, never
// inside an append: `growAuditTree` reads the entries past the tree's size, in chunks, each chunk
// one transaction holding the tenant's audit_trees row lock, so two growers (two control planes)
// take turns and write every node once. A node, once written, never changes; proofs and roots
// are folded from at most a few dozen of them (`readTreeHashes`), whatever the tree's size.
//
// Hashes travel as hex text (`decode`/`encode` in SQL) so PGlite and PostgreSQL drivers agree.

import { auditLeafHash } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import {
  type HashedNode,
  MerkleFrontier,
  rangeNodes,
  type TreeNode,
} from '../../shared/tlog/index.js';
import type { Database, SqlExecutor } from '../engine/database.js';

/** Entries read and hashed per transaction while a tree grows. */
export const DEFAULT_TREE_CHUNK = 4096;

export interface AuditTreeState {
  readonly size: number;
  readonly root: Uint8Array;
}

const ENSURE_TREE = `
insert into audit_trees ("tenantId", size) values ($1, 0) on conflict ("tenantId") do nothing`;
const LOCK_TREE = `select size from audit_trees where "tenantId" = $1 for update`;
const ENTRIES_AFTER = `
select seq, hash from audit_entries where "tenantId" = $1 and seq > $2 order by seq limit $3`;
const INSERT_NODES = `
insert into audit_tree_nodes ("tenantId", level, index, hash)
select $1, level, index, decode(hash, 'hex')
from unnest($2::smallint[], $3::bigint[], $4::text[]) as n(level, index, hash)
on conflict do nothing`;
const SET_SIZE = 'update audit_trees set size = $2 where "tenantId" = $1';
const READ_NODES = `
select n.level, n.index, encode(n.hash, 'hex') as hash
from unnest($2::smallint[], $3::bigint[]) as w(level, index)
join audit_tree_nodes n on n."tenantId" = $1 and n.level = w.level and n.index = w.index`;

/** The size the tenant's tree has reached (0 before it exists). */
export async function auditTreeSize(db: SqlExecutor, tenantId: string): Promise<number> {
  const rows = await db.query<{ size: string | number }>(
    'select size from audit_trees where "tenantId" = $1',
    [tenantId],
  );
  return rows[0] === undefined ? 0 : Number(rows[0].size);
}

/**
 * Grows the tenant's tree over the entries appended since it last grew, chunk by chunk, until it
 * covers `upTo` entries (default: every entry there is when a chunk starts). Resolves with the
 * size reached and its root. The tenant must exist (a foreign key guards the tree row).
 */
export async function growAuditTree(
  db: Database,
  tenantId: string,
  options: { readonly upTo?: number; readonly chunk?: number } = {},
): Promise<AuditTreeState> {
  const chunk = options.chunk ?? DEFAULT_TREE_CHUNK;
  for (;;) {
    const step = await db.transaction(async (tx) => {
      await tx.query(ENSURE_TREE, [tenantId]);
      const [row] = await tx.query<{ size: string | number }>(LOCK_TREE, [tenantId]);
      const size = Number(row?.size ?? 0);
      const frontier = new MerkleFrontier(size, await readEdge(tx, tenantId, size));
      const limit = Math.min(chunk, options.upTo === undefined ? chunk : options.upTo - size);
      if (limit <= 0) return { grew: 0, state: { size, root: frontier.root() } };
      const entries = await tx.query<{ seq: string | number; hash: string }>(ENTRIES_AFTER, [
        tenantId,
        size,
        limit,
      ]);
      const levels: number[] = [];
      const indexes: number[] = [];
      const hashes: string[] = [];
      for (const entry of entries) {
        if (Number(entry.seq) !== frontier.size + 1) {
          // A chain has no gaps (unique seq, one successor per hash): a missing seq is damage
          // a checkpoint must never paper over.
          throw gatewayError('AUDIT_TREE_INCONSISTENT', {
            tenantId,
            problem: `entry seq ${frontier.size + 1} is missing (the next stored is seq ${entry.seq})`,
          });
        }
        for (const node of frontier.append(auditLeafHash(entry.hash))) {
          levels.push(node.level);
          indexes.push(node.index);
          hashes.push(Buffer.from(node.hash).toString('hex'));
        }
      }
      if (entries.length > 0) {
        await tx.query(INSERT_NODES, [tenantId, levels, indexes, hashes]);
        await tx.query(SET_SIZE, [tenantId, frontier.size]);
      }
      return { grew: entries.length, state: { size: frontier.size, root: frontier.root() } };
    });
    if (step.grew < chunk) return step.state;
  }
}

/** The stored complete subtrees of a tree of `size`, largest first: where it continues. */
async function readEdge(db: SqlExecutor, tenantId: string, size: number): Promise<HashedNode[]> {
  const edge = rangeNodes({ start: 0, end: size });
  const hashes = await readTreeHashes(db, tenantId, edge);
  return edge.map((node) => ({ ...node, hash: hashOf(hashes, tenantId, node) }));
}

/**
 * The hashes of `nodes` in one query, keyed `level/index`. Throws AUDIT_TREE_INCONSISTENT when one
 * is missing: callers ask only for nodes of a tree size already grown.
 */
export async function readTreeHashes(
  db: SqlExecutor,
  tenantId: string,
  nodes: readonly TreeNode[],
): Promise<Map<string, Uint8Array>> {
  const found = new Map<string, Uint8Array>();
  if (nodes.length === 0) return found;
  const rows = await db.query<{ level: number; index: string | number; hash: string }>(READ_NODES, [
    tenantId,
    nodes.map((node) => node.level),
    nodes.map((node) => node.index),
  ]);
  for (const row of rows) {
    found.set(`${row.level}/${Number(row.index)}`, Uint8Array.from(Buffer.from(row.hash, 'hex')));
  }
  for (const node of nodes) hashOf(found, tenantId, node);
  return found;
}

/** A node's hash from readTreeHashes' answer. */
export function hashOf(
  hashes: ReadonlyMap<string, Uint8Array>,
  tenantId: string,
  node: TreeNode,
): Uint8Array {
  const hash = hashes.get(`${node.level}/${node.index}`);
  if (hash === undefined) {
    throw gatewayError('AUDIT_TREE_INCONSISTENT', {
      tenantId,
      problem: `tree node ${node.level}/${node.index} is not stored`,
    });
  }
  return hash;
}
