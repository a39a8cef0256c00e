// Each tenant's Merkle tree over its audit chain (shared/tlog/merkle.ts), stored as tiles, the way
// Go's tlog and the transparency-dev logs store theirs: only the complete subtrees at levels 4, 8,
// 12… are rows (audit_tree_nodes), about one row per 15 entries; the leaves are the entries' own
// hashes (audit_entries, by seq), and a node between two stored levels is folded from the at most
// 8 hashes below it. So a proof reads a few dozen to a couple of hundred hashes in two indexed
// queries, whatever the tree's size, and growing the tree writes few rows: the embedded database
// (one connection) keeps serving appends between its short transactions.
//
// The tree grows behind the chain, never inside an append: `growAuditTree` reads the entries past
// the tree's size (audit_trees), in chunks, each chunk one transaction holding the tenant's
// audit_trees row lock, so two growers (two control planes) take turns and write every row once.
// A row, once written, never changes.
//
// Hashes travel as hex text (`decode`/`encode` in SQL) so PGlite and PostgreSQL drivers agree.
import { auditLeafHash, GENESIS_HASH } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import {
  type HashedNode,
  MerkleFrontier,
  nodeHash,
  rangeNodes,
  type TreeNode,
} from '../../shared/tlog/index.js';
import type { Database, SqlExecutor } from '../engine/database.js';

/** Stored levels are the positive multiples of this; the levels between are folded on read. */
export const STORED_LEVEL_STEP = 4;

/**
 * Entries read and hashed per transaction while a tree grows: few, so that on the embedded
 * database (one connection) appends wait behind a short transaction, never a long one.
 */
export const DEFAULT_TREE_CHUNK = 1024;

export interface AuditTreeState {
  readonly size: number;
  readonly root: Uint8Array;
}

// Makes the row when missing and locks it either way (an upsert's update takes the row lock).
const LOCK_TREE = `
insert into audit_trees ("tenantId", size) values ($1, 0)
on conflict ("tenantId") do update set size = audit_trees.size
returning size, hash,
  (select seq from audit_chain_heads where "tenantId" = $1) as head`;
const ENTRIES_AFTER = `
select seq, hash from audit_entries where "tenantId" = $1 and seq > $2 order by seq limit $3`;
const INSERT_NODES = `
insert into audit_tree_nodes ("tenantId", level, index, hash)
select $1, level, index, decode(hash, 'hex')
from unnest($2::smallint[], $3::bigint[], $4::text[]) as n(level, index, hash)
on conflict do nothing`;
const SET_SIZE = 'update audit_trees set size = $2, hash = $3 where "tenantId" = $1';
const READ_NODES = `
select n.level, n.index, encode(n.hash, 'hex') as hash
from unnest($2::smallint[], $3::bigint[]) as w(level, index)
join audit_tree_nodes n on n."tenantId" = $1 and n.level = w.level and n.index = w.index`;
const READ_BELOW = `
${READ_NODES}
union all
select -1, seq, hash from audit_entries where "tenantId" = $1 and seq = any($4::bigint[])`;

function isStoredLevel(level: number): boolean {
  return level > 0 && level % STORED_LEVEL_STEP === 0;
}

/** The size the tenant's tree has reached (0 before it exists). */
export async function auditTreeSize(db: SqlExecutor, tenantId: string): Promise<number> {
  const rows = await db.query<{ size: string | number }>(
    'select size from audit_trees where "tenantId" = $1',
    [tenantId],
  );
  return rows[0] === undefined ? 0 : Number(rows[0].size);
}

/** An entry as the writer committed it: enough to place it in the chain. */
export interface CommittedLeaf {
  readonly hash: string;
  /** null (or 64 zeros) for the first entry. */
  readonly prevHash: string | null;
}

/** What a grower remembers of a tenant's tree between two growths, to skip reading it again. */
export interface TreeMemory {
  /** The tree's right edge at `size`, whose last leaf is the entry with chain hash `hash`. */
  edge?: { readonly size: number; readonly hash: string; readonly nodes: readonly HashedNode[] };
  /**
   * Entries this process committed, in commit order: a growth takes its leaves from here when
   * they continue the tree (each one's prevHash the hash before it: the chain's unique link), and
   * reads the database only for the others. Consumed entries are removed.
   */
  recent: CommittedLeaf[];
}

/**
 * Grows the tenant's tree over the entries appended since it last grew, chunk by chunk, until it
 * covers `upTo` entries (default: every entry there is when a chunk starts; `head`: the chain's
 * head when it starts, so a steady stream of appends does not keep it going). Resolves with the
 * size reached and its root. The tenant must exist (a foreign key guards the tree row). With
 * `memory`, leaves this process committed come from it instead of the database.
 */
export async function growAuditTree(
  db: Database,
  tenantId: string,
  options: {
    /** A size, or `head`: the chain's head when the growth starts. */
    readonly upTo?: number | 'head';
    readonly chunk?: number;
    readonly memory?: TreeMemory;
  } = {},
): Promise<AuditTreeState> {
  const chunk = options.chunk ?? DEFAULT_TREE_CHUNK;
  const memory = options.memory;
  let upTo = options.upTo;
  for (;;) {
    const step = await db.transaction(async (tx) => {
      const [row] = await tx.query<{
        size: string | number;
        hash: string;
        head: string | number | null;
      }>(LOCK_TREE, [tenantId]);
      const size = Number(row?.size ?? 0);
      if (upTo === 'head') upTo = Number(row?.head ?? 0);
      const lastHash = row?.hash ?? GENESIS_HASH;
      const remembered = memory?.edge;
      const frontier = new MerkleFrontier(
        size,
        remembered && remembered.size === size && remembered.hash === lastHash
          ? remembered.nodes
          : await readEdge(tx, tenantId, size),
      );
      const limit = Math.min(chunk, upTo === undefined ? chunk : upTo - size);
      if (limit <= 0) return { grew: 0, fromMemory: false, state: { size, root: frontier.root() } };
      const linked = memory ? takeLinked(memory.recent, lastHash, limit) : [];
      const entries =
        linked.length > 0
          ? linked
          : await tx.query<{ seq: string | number; hash: string }>(ENTRIES_AFTER, [
              tenantId,
              size,
              limit,
            ]);
      const levels: number[] = [];
      const indexes: number[] = [];
      const hashes: string[] = [];
      let last = lastHash;
      for (const entry of entries) {
        if ('seq' in entry && Number(entry.seq) !== frontier.size + 1) {
          // A chain has no gaps (unique seq, one successor per hash): a missing seq is damage
          // a checkpoint must never paper over.
          throw gatewayError('AUDIT_TREE_INCONSISTENT', {
            tenantId,
            problem: `entry seq ${frontier.size + 1} is missing (the next stored is seq ${entry.seq})`,
          });
        }
        for (const node of frontier.append(auditLeafHash(entry.hash))) {
          if (!isStoredLevel(node.level)) continue;
          levels.push(node.level);
          indexes.push(node.index);
          hashes.push(Buffer.from(node.hash).toString('hex'));
        }
        last = entry.hash;
      }
      if (entries.length > 0) {
        if (levels.length > 0) await tx.query(INSERT_NODES, [tenantId, levels, indexes, hashes]);
        await tx.query(SET_SIZE, [tenantId, frontier.size, last]);
      }
      if (memory) memory.edge = { size: frontier.size, hash: last, nodes: frontier.edge };
      return {
        grew: entries.length,
        fromMemory: linked.length > 0,
        state: { size: frontier.size, root: frontier.root() },
      };
    });
    // Leaves from memory may be followed by other processes' entries: read on until a chunk of
    // the database comes back short.
    if (!step.fromMemory && step.grew < chunk) return step.state;
  }
}

/** The checkpoint the fast path stores with the tree it grew (signed by the caller). */
export interface CheckpointToStore {
  readonly id: string;
  readonly rootHash: string;
  readonly keyId: string;
  readonly note: string;
}

/** Leaves hashed between two yields to the event loop. */
const HASH_SLICE = 128;

const EXTEND = 'select audit_tree_extend($1, $2, $3, $4, $5, $6, $7, $8, $9) as extended';

/**
 * The fast path of a cut, one round trip: the tree grows from the remembered edge over the
 * entries this process committed that continue it, and the checkpoint `sign` makes for the new
 * size is stored with it, iff the stored tree is still the remembered one (audit_tree_extend).
 * Null when it cannot (nothing remembered or nothing continues it, or the tree moved meanwhile):
 * then the caller takes growAuditTree, which reads what it needs.
 */
export async function extendAuditTreeFromMemory(
  db: SqlExecutor,
  tenantId: string,
  memory: TreeMemory,
  sign: (state: AuditTreeState) => CheckpointToStore,
): Promise<{ state: AuditTreeState; checkpoint: CheckpointToStore } | null> {
  const edge = memory.edge;
  if (edge === undefined) return null;
  const run = takeLinked(memory.recent, edge.hash, memory.recent.length);
  if (run.length === 0) return null;
  const frontier = new MerkleFrontier(edge.size, edge.nodes);
  const levels: number[] = [];
  const indexes: number[] = [];
  const hashes: string[] = [];
  for (const [i, leaf] of run.entries()) {
    // About a millisecond of hashing per thousand entries, on the thread that serves requests:
    // in slices, so a request waits for one slice at most.
    if (i > 0 && i % HASH_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    for (const node of frontier.append(auditLeafHash(leaf.hash))) {
      if (!isStoredLevel(node.level)) continue;
      levels.push(node.level);
      indexes.push(node.index);
      hashes.push(Buffer.from(node.hash).toString('hex'));
    }
  }
  const last = (run[run.length - 1] as CommittedLeaf).hash;
  const state = { size: frontier.size, root: frontier.root() };
  const checkpoint = sign(state);
  const [row] = await db.query<{ extended: boolean }>(EXTEND, [
    tenantId,
    edge.size,
    edge.hash,
    frontier.size,
    last,
    levels,
    indexes,
    hashes,
    JSON.stringify(checkpoint),
  ]);
  if (row?.extended !== true) {
    memory.edge = undefined;
    return null;
  }
  memory.edge = { size: frontier.size, hash: last, nodes: frontier.edge };
  return { state, checkpoint };
}

/**
 * Removes from `recent` the entries the tree already holds and returns the run (at most `limit`)
 * that continues it after the entry with hash `after`; empty when none does.
 */
function takeLinked(recent: CommittedLeaf[], after: string, limit: number): CommittedLeaf[] {
  const linkOf = (leaf: CommittedLeaf) => leaf.prevHash ?? GENESIS_HASH;
  const start = recent.findIndex((leaf) => linkOf(leaf) === after);
  if (start < 0) {
    // Nothing continues the tree: what is remembered is older than it or from elsewhere.
    if (recent.some((leaf) => leaf.hash === after)) {
      recent.splice(0, recent.findIndex((leaf) => leaf.hash === after) + 1);
    }
    return [];
  }
  const run: CommittedLeaf[] = [];
  let previous = after;
  let i = start;
  while (
    i < recent.length &&
    run.length < limit &&
    linkOf(recent[i] as CommittedLeaf) === previous
  ) {
    const leaf = recent[i] as CommittedLeaf;
    run.push(leaf);
    previous = leaf.hash;
    i++;
  }
  recent.splice(0, i);
  return run;
}

/** The stored complete subtrees of a tree of `size`, largest first: where it continues. */
async function readEdge(db: SqlExecutor, tenantId: string, size: number): Promise<HashedNode[]> {
  const edge = rangeNodes({ start: 0, end: size });
  const hashes = await readTreeHashes(db, tenantId, edge);
  return edge.map((node) => ({ ...node, hash: hashOf(hashes, tenantId, node) }));
}

/**
 * The hashes of `nodes` (complete subtrees of a tree already grown), keyed `level/index`: the
 * stored rows and entry hashes below them read in two queries, the levels between folded.
 * Throws AUDIT_TREE_INCONSISTENT when something below one is missing.
 */
export async function readTreeHashes(
  db: SqlExecutor,
  tenantId: string,
  nodes: readonly TreeNode[],
): Promise<Map<string, Uint8Array>> {
  // Each node folds the 2^k hashes of the stored level (or the leaves) at or below it.
  const plans = nodes.map((node) => {
    const base = node.level - (node.level % STORED_LEVEL_STEP);
    const span = 2 ** (node.level - base);
    return { node, base, first: node.index * span, span };
  });
  const stored = new Map<string, TreeNode>();
  const seqs = new Set<number>();
  for (const plan of plans) {
    for (let i = plan.first; i < plan.first + plan.span; i++) {
      if (plan.base === 0) seqs.add(i + 1);
      else stored.set(`${plan.base}/${i}`, { level: plan.base, index: i });
    }
  }
  const below = new Map<string, Uint8Array>();
  if (stored.size > 0 || seqs.size > 0) {
    const wanted = [...stored.values()];
    // One round trip: the stored tiles, then the entries' hashes as level -1 rows.
    const rows = await db.query<{ level: number; index: string | number; hash: string }>(
      READ_BELOW,
      [tenantId, wanted.map((node) => node.level), wanted.map((node) => node.index), [...seqs]],
    );
    for (const row of rows) {
      if (row.level < 0) below.set(`0/${Number(row.index) - 1}`, auditLeafHash(row.hash));
      else
        below.set(
          `${row.level}/${Number(row.index)}`,
          Uint8Array.from(Buffer.from(row.hash, 'hex')),
        );
    }
  }
  const found = new Map<string, Uint8Array>();
  for (const plan of plans) {
    let layer: Uint8Array[] = [];
    for (let i = plan.first; i < plan.first + plan.span; i++) {
      layer.push(hashOf(below, tenantId, { level: plan.base, index: i }));
    }
    while (layer.length > 1) {
      const up: Uint8Array[] = [];
      for (let i = 0; i < layer.length; i += 2) {
        up.push(nodeHash(layer[i] as Uint8Array, layer[i + 1] as Uint8Array));
      }
      layer = up;
    }
    found.set(`${plan.node.level}/${plan.node.index}`, layer[0] as Uint8Array);
  }
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
      problem: `tree node ${node.level}/${node.index} is not stored (nor the entry below it)`,
    });
  }
  return hash;
}
