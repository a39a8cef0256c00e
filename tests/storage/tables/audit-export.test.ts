import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AuditEntry,
  formatAuditEntry,
  formatAuditExport,
  readAuditExport,
  verifyAuditChain,
} from '../../../shared/audit/index.js';
import { GatewayError } from '../../../shared/errors/index.js';
import type { SqlExecutor } from '../../../storage/engine/database.js';
import { exportAuditTrail, openAuditExport } from '../../../storage/tables/audit-export.js';
import { createAuditWriter } from '../../../storage/tables/audit-writer.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../../support/databases.js';
import { createTenant, exportAll, range } from '../fixtures/audit.js';

const base = { action: 'test.append', resourceType: 'thing', resourceId: 'r1' };

async function text(chunks: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const chunk of chunks) out += chunk;
  return out;
}

/** Runs `edit` with the append-only triggers off, as a superuser could. */
async function asSuperuser(db: SqlExecutor, edit: string, params: unknown[]): Promise<void> {
  await db.exec('alter table audit_entries disable trigger user');
  try {
    await db.query(edit, params);
  } finally {
    await db.exec('alter table audit_entries enable trigger user');
  }
}

describeEachDatabase('exportAuditTrail', (kind) => {
  let t: TestDatabase;
  let tenantId: string;
  let tenantName: string;
  const day = (d: number) => Date.UTC(2030, 5, d, 12);
  beforeAll(async () => {
    t = await createTestDatabase(kind);
    tenantName = `acme-${kind}`;
    tenantId = await createTenant(t.db, tenantName);
    // 2 500 entries over three days: 1 000 on June 1st, 1 000 on the 2nd, 500 on the 3rd.
    let clock = day(1);
    const writer = createAuditWriter(t.db, { now: () => clock });
    for (const [d, count] of [
      [1, 1000],
      [2, 1000],
      [3, 500],
    ] as const) {
      clock = day(d);
      await Promise.all(
        range(count).map((i) => writer.append({ ...base, tenantId, metadata: { d, i } })),
      );
    }
    await writer.close();
  }, 60_000);
  afterAll(async () => {
    await t?.dispose();
  });

  it('reads the whole chain in seq order, page by page, and it verifies', async () => {
    let pages = 0;
    const counting: SqlExecutor = {
      query: (sql, params) => {
        if (sql.includes('from audit_entries')) pages++;
        return t.db.query(sql, params);
      },
      exec: (script) => t.db.exec(script),
    };
    const entries = await exportAll(counting, tenantId, { pageSize: 1000 });
    expect(entries).toHaveLength(2500);
    expect(pages).toBe(3);
    expect(entries[0]?.prevHash).toBeNull();
    expect(await verifyAuditChain(entries)).toMatchObject({ ok: true, count: 2500 });
    // Across the page boundaries, nothing is skipped or repeated.
    expect(new Set(entries.map((e) => e.id)).size).toBe(2500);
  });

  it('finds the tenant by id or by name and describes the export', async () => {
    const byName = await openAuditExport(t.db, { tenant: tenantName });
    const byId = await openAuditExport(t.db, { tenant: tenantId });
    for (const opened of [byName, byId]) {
      expect(opened).toMatchObject({ tenantId, tenantName, filtered: false });
      expect(opened.head.seq).toBe(2500);
    }
    const entries = await exportAll(t.db, tenantName);
    expect(byId.head.hash).toBe(entries.at(-1)?.hash);
  });

  it('ends at the head committed when it was opened, even while appends go on', async () => {
    const other = await createTenant(t.db);
    const writer = createAuditWriter(t.db);
    await Promise.all(range(10).map(() => writer.append({ ...base, tenantId: other })));
    const opened = await openAuditExport(t.db, { tenant: other, pageSize: 3 });
    await Promise.all(range(10).map(() => writer.append({ ...base, tenantId: other })));
    const entries: AuditEntry[] = [];
    for await (const entry of opened) entries.push(entry);
    expect(entries).toHaveLength(10);
    expect(await verifyAuditChain(entries, { expectedHead: opened.head.hash })).toMatchObject({
      ok: true,
    });
    await writer.close();
  });

  it('selects a time range: from inclusive, to exclusive, as a slice that verifies', async () => {
    const all = await exportAll(t.db, tenantId);
    const june2 = new Date(day(2));
    const june3 = new Date(day(3));
    const middle = await exportAll(t.db, tenantId, { from: june2, to: june3, pageSize: 300 });
    expect(middle).toHaveLength(1000);
    expect(middle[0]).toEqual(all[1000]);
    expect(middle.at(-1)).toEqual(all[1999]);
    expect(
      await verifyAuditChain(middle, {
        expectedPrevHash: all[999]!.hash,
        expectedHead: all[1999]!.hash,
      }),
    ).toMatchObject({ ok: true, count: 1000 });
    expect(await exportAll(t.db, tenantId, { from: june3 })).toEqual(all.slice(2000));
    expect(await exportAll(t.db, tenantId, { to: june2 })).toEqual(all.slice(0, 1000));
    expect(await exportAll(t.db, tenantId, { from: new Date(day(4)) })).toEqual([]);
    expect((await openAuditExport(t.db, { tenant: tenantId, to: june2 })).filtered).toBe(true);
  });

  it('refuses an unknown tenant with AUDIT_TENANT_UNKNOWN before reading anything', async () => {
    const error = await openAuditExport(t.db, { tenant: 'nobody' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('AUDIT_TENANT_UNKNOWN');
    expect((error as GatewayError).message).toBe('no tenant has the id or name "nobody"');
    await expect(exportAll(t.db, 'nobody')).rejects.toMatchObject({ code: 'AUDIT_TENANT_UNKNOWN' });
  });

  it('exports a tenant without entries as an empty chain', async () => {
    const empty = await createTenant(t.db);
    const opened = await openAuditExport(t.db, { tenant: empty });
    expect(opened.head.seq).toBe(0);
    expect(await text(formatAuditExport(opened))).toBe('[\n]\n');
  });

  it('writes text that the verifier reads back byte for byte', async () => {
    const exportText = await text(formatAuditExport(exportAuditTrail(t.db, { tenant: tenantId })));
    const reread: unknown[] = [];
    // Chunks of odd sizes, as a pipe would deliver them.
    const bytes = new TextEncoder().encode(exportText);
    const chunks = range(Math.ceil(bytes.length / 4093)).map((i) =>
      bytes.subarray(i * 4093, (i + 1) * 4093),
    );
    for await (const entry of readAuditExport(chunks)) reread.push(entry);
    expect(reread).toHaveLength(2500);
    const again = `[\n${reread.map((e) => formatAuditEntry(e as AuditEntry)).join(',\n')}\n]\n`;
    expect(again).toBe(exportText);
    expect(await verifyAuditChain(readAuditExport([exportText]))).toMatchObject({
      ok: true,
      count: 2500,
    });
  });

  it('lets the verifier name an entry a superuser edited', async () => {
    const victim = await createTenant(t.db);
    const writer = createAuditWriter(t.db);
    for (let i = 0; i < 10; i++)
      await writer.append({ ...base, tenantId: victim, metadata: { i } });
    await writer.close();
    const before = await exportAll(t.db, victim);

    await expect(
      t.db.query(`update audit_entries set action = 'x' where id = $1`, [before[3]!.id]),
    ).rejects.toThrow(/append-only/);

    await asSuperuser(t.db, `update audit_entries set action = 'test.harmless' where id = $1`, [
      before[3]!.id,
    ]);
    const edited = await verifyAuditChain(await exportAll(t.db, victim));
    expect(edited.ok).toBe(false);
    if (edited.ok) return;
    expect(edited.firstBroken).toMatchObject({
      index: 3,
      id: before[3]!.id,
      code: 'AUDIT_HASH_MISMATCH',
    });

    await asSuperuser(
      t.db,
      `update audit_entries set action = $2, metadata = '{"i": 99, "hashVersion": 2}' where id = $1`,
      [before[3]!.id, before[3]!.action],
    );
    const metadata = await verifyAuditChain(await exportAll(t.db, victim));
    expect(metadata.ok).toBe(false);
    if (metadata.ok) return;
    expect(metadata.firstBroken).toMatchObject({
      index: 3,
      id: before[3]!.id,
      code: 'AUDIT_SEAL_MISMATCH',
    });
  });

  it('lets the verifier name the entry after a row a superuser deleted', async () => {
    const victim = await createTenant(t.db);
    const writer = createAuditWriter(t.db);
    for (let i = 0; i < 10; i++)
      await writer.append({ ...base, tenantId: victim, metadata: { i } });
    await writer.close();
    const before = await exportAll(t.db, victim);
    await expect(
      t.db.query('delete from audit_entries where id = $1', [before[5]!.id]),
    ).rejects.toThrow(/append-only/);
    await asSuperuser(t.db, 'delete from audit_entries where id = $1', [before[5]!.id]);
    const result = await verifyAuditChain(await exportAll(t.db, victim));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.firstBroken).toMatchObject({
      index: 5,
      id: before[6]!.id,
      code: 'AUDIT_CHAIN_BROKEN',
      cause: 'deleted',
    });
  });
});
