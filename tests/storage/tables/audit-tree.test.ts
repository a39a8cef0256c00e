// The stored audit tree on both databases: grown in chunks (and resumed) it has the roots of the
// tree built in memory over the same entries; every complete subtree folds from its stored tiles
// and leaves; a missing row or a missing entry is AUDIT_TREE_INCONSISTENT, never a wrong root.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditLeafHash } from '../../../shared/audit/index.js';
import { GatewayError } from '../../../shared/errors/index.js';
import {
  foldNodes,
  inclusionProofRanges,
  MerkleFrontier,
  nodesOfRanges,
  rangeNodes,
  verifyInclusion,
} from '../../../shared/tlog/index.js';
import type { Database, SqlExecutor } from '../../../storage/engine/database.js';
import {
  auditTreeSize,
  extendAuditTreeFromMemory,
  growAuditTree,
  hashOf,
  readTreeHashes,
  type TreeMemory,
} from '../../../storage/tables/audit-tree.js';
import { createAuditWriter } from '../../../storage/tables/audit-writer.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../../support/databases.js';
import { createTenant, exportAll } from '../fixtures/audit.js';

const COUNT = 300;

describeEachDatabase('audit tree storage', (kind) => {
  let t: TestDatabase;
  let tenantId: string;
  const roots: Uint8Array[] = [];
  let hashes: string[] = [];

  /** Appends `count` entries one by one; `committed` collects them as the writer commits them. */
  const appendEntries = async (
    tenant: string,
    count: number,
    committed?: { hash: string; prevHash: string | null }[],
  ) => {
    const writer = createAuditWriter(
      t.db,
      committed ? { onCommitted: (entries) => committed.push(...entries) } : {},
    );
    for (let i = 0; i < count; i++) {
      await writer.append({
        tenantId: tenant,
        action: 'test.event',
        resourceType: 'test',
        resourceId: `r${i}`,
      });
    }
    await writer.close();
  };

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    tenantId = await createTenant(t.db);
    await appendEntries(tenantId, COUNT);
    hashes = (await exportAll(t.db, tenantId)).map((entry) => entry.hash);
    const frontier = new MerkleFrontier();
    for (const hash of hashes) {
      frontier.append(auditLeafHash(hash));
      roots.push(frontier.root());
    }
  });
  afterAll(() => t?.dispose());

  it('grows in chunks, stops where asked, resumes, and has the in-memory roots', async () => {
    for (const upTo of [1, 17, 64, 65, 200]) {
      const state = await growAuditTree(t.db, tenantId, { upTo, chunk: 7 });
      expect(state.size).toBe(upTo);
      expect(Buffer.from(state.root)).toEqual(Buffer.from(roots[upTo - 1] as Uint8Array));
    }
    const state = await growAuditTree(t.db, tenantId, { chunk: 50 });
    expect(state.size).toBe(COUNT);
    expect(Buffer.from(state.root)).toEqual(Buffer.from(roots[COUNT - 1] as Uint8Array));
    expect(await auditTreeSize(t.db, tenantId)).toBe(COUNT);
    // Tiles: only the levels 4, 8… are rows (18 + 1 for 300 leaves).
    const [row] = await t.db.query<{ n: number; levels: number[] }>(
      `select count(*)::int as n, array_agg(distinct level order by level) as levels
       from audit_tree_nodes where "tenantId" = $1`,
      [tenantId],
    );
    expect(row).toEqual({ n: 19, levels: [4, 8] });
  });

  it('folds every root and proof from tiles and leaves', async () => {
    for (const size of [1, 2, 3, 15, 16, 17, 255, 256, 299, 300]) {
      const nodes = rangeNodes({ start: 0, end: size });
      const read = await readTreeHashes(t.db, tenantId, nodes);
      const root = foldNodes(nodes.map((node) => hashOf(read, tenantId, node)));
      expect(Buffer.from(root), `size ${size}`).toEqual(Buffer.from(roots[size - 1] as Uint8Array));
      for (const index of [0, Math.floor(size / 2), size - 1]) {
        const plan = nodesOfRanges(inclusionProofRanges(index, size));
        const found = await readTreeHashes(t.db, tenantId, plan.nodes);
        const proof = plan.fold((node) => hashOf(found, tenantId, node));
        const leaf = auditLeafHash(hashes[index] as string);
        expect(verifyInclusion(leaf, index, size, proof, roots[size - 1] as Uint8Array)).toBe(true);
      }
    }
  });

  it('grows from the entries this process committed, and from the database for the rest', async () => {
    const other = await createTenant(t.db);
    const committed: { hash: string; prevHash: string | null }[] = [];
    await appendEntries(other, 120, committed);
    const frontier = new MerkleFrontier();
    for (const entry of committed) frontier.append(auditLeafHash(entry.hash));
    // Entries 1..50 remembered, 51..60 not (another process's), 61..120 remembered.
    const memory: TreeMemory = { recent: [...committed.slice(0, 50), ...committed.slice(60)] };
    const reads: string[] = [];
    const counting = {
      ...t.db,
      transaction: <T>(fn: (tx: SqlExecutor) => Promise<T>) =>
        t.db.transaction((tx) =>
          fn({
            ...tx,
            query: (text: string, params?: readonly unknown[]) => {
              if (text.includes('from audit_entries')) reads.push(text);
              return tx.query(text, params);
            },
          } as SqlExecutor),
        ),
    } as Database;
    const state = await growAuditTree(counting, other, { memory, chunk: 32 });
    expect(state.size).toBe(120);
    expect(Buffer.from(state.root)).toEqual(Buffer.from(frontier.root()));
    expect(memory.recent).toEqual([]);
    // The database was read for the ten entries memory lacked (and to see nothing follows).
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.length).toBeLessThan(4);
  });

  it('extends the tree and stores its checkpoint in one round trip, only from the tree it remembers', async () => {
    const other = await createTenant(t.db);
    const committed: { hash: string; prevHash: string | null }[] = [];
    const append = (count: number) => appendEntries(other, count, committed);
    await append(10);
    const memory: TreeMemory = { recent: [...committed] };
    await growAuditTree(t.db, other, { memory });
    await append(25);
    memory.recent.push(...committed.slice(10));
    const sign = (state: { size: number; root: Uint8Array }) => ({
      id: `cp-${state.size}`,
      rootHash: Buffer.from(state.root).toString('base64'),
      keyId: 'k',
      note: 'n',
    });
    // A checkpoint row needs its key.
    await t.db.query(
      `insert into audit_signing_keys (id, name, "publicKey", "verifierKey", "privateKeySealed")
       values ('k', 'x', 'x', $1, 'x')`,
      [`x-${other}`],
    );
    const fast = await extendAuditTreeFromMemory(t.db, other, memory, sign);
    const frontier = new MerkleFrontier();
    for (const entry of committed) frontier.append(auditLeafHash(entry.hash));
    expect(fast?.state.size).toBe(35);
    expect(Buffer.from(fast?.state.root as Uint8Array)).toEqual(Buffer.from(frontier.root()));
    const [stored] = await t.db.query<{ treeSize: string }>(
      'select "treeSize"::text from audit_checkpoints where id = $1',
      ['cp-35'],
    );
    expect(stored?.treeSize).toBe('35');
    expect(await auditTreeSize(t.db, other)).toBe(35);
    // Another grower moved the tree: nothing is written, the caller falls back.
    await append(5);
    const stale: TreeMemory = {
      edge: { size: 30, hash: committed[29]?.hash as string, nodes: [] },
      recent: committed.slice(30),
    };
    await expect(extendAuditTreeFromMemory(t.db, other, stale, sign)).rejects.toThrow(RangeError);
    memory.recent.push(...committed.slice(35));
    await growAuditTree(t.db, other, { upTo: 38 });
    expect(await extendAuditTreeFromMemory(t.db, other, memory, sign)).toBeNull();
    expect(memory.edge).toBeUndefined();
    expect(await auditTreeSize(t.db, other)).toBe(38);
  });

  it('refuses a tree with a missing tile or entry (AUDIT_TREE_INCONSISTENT)', async () => {
    const other = await createTenant(t.db);
    await appendEntries(other, 40);
    await growAuditTree(t.db, other, { upTo: 20 });
    await t.db.query(
      'delete from audit_tree_nodes where "tenantId" = $1 and level = 4 and index = 0',
      [other],
    );
    const code = (error: unknown) => (error instanceof GatewayError ? error.code : String(error));
    expect(code(await growAuditTree(t.db, other).catch((e: unknown) => e))).toBe(
      'AUDIT_TREE_INCONSISTENT',
    );
    await expect(readTreeHashes(t.db, other, [{ level: 4, index: 0 }])).rejects.toMatchObject({
      code: 'AUDIT_TREE_INCONSISTENT',
    });
    // An entry missing past the tree: the grower stops rather than skip it.
    const third = await createTenant(t.db);
    await appendEntries(third, 5);
    await t.db.query('alter table audit_entries disable trigger all');
    try {
      await t.db.query('delete from audit_entries where "tenantId" = $1 and seq = 3', [third]);
    } finally {
      await t.db.query('alter table audit_entries enable trigger all');
    }
    expect(code(await growAuditTree(t.db, third).catch((e: unknown) => e))).toBe(
      'AUDIT_TREE_INCONSISTENT',
    );
  });
});
