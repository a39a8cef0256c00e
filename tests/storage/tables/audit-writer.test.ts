import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AuditEntry, verifyAuditChain } from '../../../shared/audit/index.js';
import { GatewayError } from '../../../shared/errors/index.js';
import type { Database } from '../../../storage/engine/database.js';
import { type AuditFlushInfo, createAuditWriter } from '../../../storage/tables/audit-writer.js';
import {
  createTestDatabase,
  describeEachDatabase,
  postgresUrl,
  type TestDatabase,
} from '../../support/databases.js';
import { connectToSchema, createTenant, exportAll, range, storedSeqs } from '../fixtures/audit.js';

const base = { action: 'test.append', resourceType: 'thing', resourceId: 'r1' };

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected the promise to reject');
}

describeEachDatabase('createAuditWriter', (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('keeps one unbroken chain per tenant under 64 concurrent appenders', async () => {
    const tenants = await Promise.all(range(4).map(() => createTenant(t.db)));
    const flushes: AuditFlushInfo[] = [];
    const writer = createAuditWriter(t.db, { onFlush: (info) => flushes.push(info) });
    const resolved = new Map<string, AuditEntry[]>(tenants.map((id) => [id, []]));
    await Promise.all(
      range(64).map(async (appender) => {
        const tenantId = tenants[appender % tenants.length]!;
        for (let i = 0; i < 20; i++) {
          const entry = await writer.append({ ...base, tenantId, metadata: { appender, i } });
          resolved.get(tenantId)!.push(entry);
        }
      }),
    );
    await writer.close();

    for (const tenantId of tenants) {
      const exported = await exportAll(t.db, tenantId);
      expect(await verifyAuditChain(exported)).toMatchObject({ ok: true, count: 320 });
      expect(await storedSeqs(t.db, tenantId)).toEqual(range(320).map((i) => i + 1));
      const ids = new Set(exported.map((entry) => entry.id));
      for (const entry of resolved.get(tenantId)!) expect(ids.has(entry.id)).toBe(true);
      const byId = new Map(exported.map((entry) => [entry.id, entry]));
      for (const entry of resolved.get(tenantId)!) expect(byId.get(entry.id)).toEqual(entry);
      const times = exported.map((entry) => entry.createdAt);
      expect([...times].sort()).toEqual(times);
    }
    expect(flushes.reduce((sum, flush) => sum + flush.entries, 0)).toBe(64 * 20);
    expect(flushes.length).toBeLessThan(64 * 20);
  }, 60_000);

  it('commits many appends in one transaction and resolves each only after the commit', async () => {
    const tenantId = await createTenant(t.db);
    const flushes: AuditFlushInfo[] = [];
    const writer = createAuditWriter(t.db, { onFlush: (info) => flushes.push(info) });
    // A second connection where there can be one (PostgreSQL); PGlite has only one.
    const other = kind === 'postgres' ? connectToSchema(postgresUrl!, t.schema!) : undefined;
    const readBack = async (id: string): Promise<number> =>
      other
        ? (await other.query('select 1 from audit_entries where id = $1', [id])).rowCount!
        : (await t.db.query('select 1 from audit_entries where id = $1', [id])).length;
    try {
      const visible = await Promise.all(
        range(200).map((i) =>
          writer.append({ ...base, tenantId, metadata: { i } }).then((entry) => readBack(entry.id)),
        ),
      );
      expect(visible).toEqual(range(200).map(() => 1));
      expect(flushes.length).toBeLessThan(10);
      expect(flushes.reduce((sum, flush) => sum + flush.entries, 0)).toBe(200);
      expect(flushes[0]).toMatchObject({ entries: 200, tenants: 1, rejected: 0 });
    } finally {
      await other?.end();
      await writer.close();
    }
  });

  it('bounds a transaction to maxBatch entries; later appends wait for the next flush', async () => {
    const tenantId = await createTenant(t.db);
    const flushes: AuditFlushInfo[] = [];
    const writer = createAuditWriter(t.db, { maxBatch: 10, onFlush: (i) => flushes.push(i) });
    await Promise.all(range(35).map(() => writer.append({ ...base, tenantId })));
    expect(flushes.map((flush) => flush.entries)).toEqual([10, 10, 10, 5]);
    expect(await storedSeqs(t.db, tenantId)).toEqual(range(35).map((i) => i + 1));
    await writer.close();
  });

  it('rejects an unknown tenant alone; the rest of its batch commits', async () => {
    const tenantId = await createTenant(t.db);
    const flushes: AuditFlushInfo[] = [];
    const writer = createAuditWriter(t.db, { onFlush: (info) => flushes.push(info) });
    const results = await Promise.allSettled([
      writer.append({ ...base, tenantId }),
      writer.append({ ...base, tenantId: 'no-such-tenant' }),
      writer.append({ ...base, tenantId }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const error = (results[1] as PromiseRejectedResult).reason as GatewayError;
    expect(error.code).toBe('AUDIT_TENANT_UNKNOWN');
    expect(error.message).toContain('"no-such-tenant"');
    expect(flushes).toEqual([expect.objectContaining({ entries: 2, tenants: 1, rejected: 1 })]);
    const count = await t.db.query<{ n: number }>(
      `select count(*)::int as n from audit_chain_heads where "tenantId" = 'no-such-tenant'`,
    );
    expect(count[0]?.n).toBe(0);
    expect(await verifyAuditChain(await exportAll(t.db, tenantId))).toMatchObject({
      ok: true,
      count: 2,
    });
    await writer.close();
  });

  it('rejects invalid entries and taken ids alone, leaving no gap in the chain', async () => {
    const tenantId = await createTenant(t.db);
    const writer = createAuditWriter(t.db);
    const first = await writer.append({ ...base, tenantId, id: 'fixed-id-1' });
    const [dup, nul, tool, ok] = await Promise.allSettled([
      writer.append({ ...base, tenantId, id: 'fixed-id-1' }),
      writer.append({ ...base, tenantId, action: 'bad\u0000action' }),
      writer.append({ ...base, tenantId, metadata: { tool: 42 } }),
      writer.append({ ...base, tenantId, metadata: { surrogate: 'ok \ud83d\ude00' } }),
    ]);
    expect((dup as PromiseRejectedResult).reason.code).toBe('AUDIT_ENTRY_DUPLICATE');
    expect((nul as PromiseRejectedResult).reason.code).toBe('AUDIT_ENTRY_INVALID');
    expect((tool as PromiseRejectedResult).reason.code).toBe('AUDIT_ENTRY_INVALID');
    expect(ok.status).toBe('fulfilled');
    expect((await rejection(writer.append({ ...base, tenantId, resourceId: '\udc00' }))).code).toBe(
      'AUDIT_ENTRY_INVALID',
    );
    const exported = await exportAll(t.db, tenantId);
    expect(exported.map((entry) => entry.id)).toEqual([
      first.id,
      (ok as PromiseFulfilledResult<AuditEntry>).value.id,
    ]);
    expect((await verifyAuditChain(exported)).ok).toBe(true);
    await writer.close();
  });

  it('rejects every promise of a batch whose transaction fails, writes none of it, and goes on', async () => {
    const tenantId = await createTenant(t.db);
    const writer = createAuditWriter(t.db);
    const before = await writer.append({ ...base, tenantId });
    // A database-side failure in the middle of a batch.
    await t.db.exec(`
      create function audit_test_explode() returns trigger language plpgsql as $$
      begin
        if new.action = 'test.explode' then raise exception 'exploding on purpose'; end if;
        return new;
      end $$;
      create trigger audit_test_explode before insert on audit_entries
        for each row execute function audit_test_explode();`);
    const failures: number[] = [];
    const failing = createAuditWriter(t.db, {
      onFlushError: (info) => failures.push(info.entries),
    });
    try {
      const results = await Promise.allSettled([
        failing.append({ ...base, tenantId }),
        failing.append({ ...base, tenantId, action: 'test.explode' }),
        failing.append({ ...base, tenantId }),
      ]);
      for (const result of results) {
        expect(result.status).toBe('rejected');
        const error = (result as PromiseRejectedResult).reason as GatewayError;
        expect(error.code).toBe('AUDIT_WRITE_FAILED');
        expect(error.message).toContain('exploding on purpose');
      }
      expect(failures).toEqual([3]);
      expect(await storedSeqs(t.db, tenantId)).toEqual([1]);
      const heads = await t.db.query<{ hash: string }>(
        `select hash from audit_chain_heads where "tenantId" = $1`,
        [tenantId],
      );
      expect(heads[0]?.hash).toBe(before.hash);
      const after = await failing.append({ ...base, tenantId });
      expect(after.prevHash).toBe(before.hash);
    } finally {
      await t.db.exec(
        'drop trigger audit_test_explode on audit_entries; drop function audit_test_explode();',
      );
      await failing.close();
      await writer.close();
    }
    expect(await verifyAuditChain(await exportAll(t.db, tenantId))).toMatchObject({
      ok: true,
      count: 2,
    });
  });

  it('commits a batch of a chain it knows in one statement; re-reads a head another writer moved', async () => {
    const tenantId = await createTenant(t.db);
    const calls: string[] = [];
    const counted: Database = {
      ...t.db,
      query(text, params) {
        calls.push('query');
        return t.db.query(text, params);
      },
      transaction(fn) {
        calls.push('transaction');
        return t.db.transaction(fn);
      },
    };
    const writer = createAuditWriter(counted);
    const other = createAuditWriter(t.db);
    await writer.append({ ...base, tenantId });
    expect(calls).toEqual(['transaction']);

    calls.length = 0;
    await Promise.all(
      range(5).map((i) => writer.append({ ...base, tenantId, resourceId: `${i}` })),
    );
    expect(calls).toEqual(['query']);

    await other.append({ ...base, tenantId, resourceId: 'from another writer' });
    calls.length = 0;
    await writer.append({ ...base, tenantId, resourceId: 'after the other' });
    expect(calls).toEqual(['query', 'transaction']);

    await Promise.all([writer.close(), other.close()]);
    expect(await verifyAuditChain(await exportAll(t.db, tenantId))).toMatchObject({
      ok: true,
      count: 8,
    });
  });

  it('never lets createdAt go backwards within a chain, whatever the clock says', async () => {
    const tenantId = await createTenant(t.db);
    const clock = [Date.UTC(2030, 0, 1, 12), Date.UTC(2030, 0, 1, 11), Date.UTC(2030, 0, 1, 13)];
    let tick = 0;
    const writer = createAuditWriter(t.db, { now: () => clock[tick++]! });
    const times: string[] = [];
    for (let i = 0; i < 3; i++) times.push((await writer.append({ ...base, tenantId })).createdAt);
    expect(times).toEqual([
      '2030-01-01T12:00:00.000Z',
      '2030-01-01T12:00:00.000Z',
      '2030-01-01T13:00:00.000Z',
    ]);
    await writer.close();
    expect((await verifyAuditChain(await exportAll(t.db, tenantId))).ok).toBe(true);
  });

  it('stores every value exactly as it was hashed', async () => {
    const tenantId = await createTenant(t.db);
    const writer = createAuditWriter(t.db);
    const written = await writer.append({
      ...base,
      tenantId,
      resourceId: '',
      metadata: {
        tool: 'fs.delete',
        actorType: 'agent',
        confidence: 0.1,
        regulatoryRelevance: ['GDPR', 'äöü', 'SOX'],
        text: 'quote " backslash \\ newline \n tab \t emoji 😀 rtl שלום',
        numbers: [1e21, -0, 1.5e-7, 2 ** 53 + 2, 123456789.12345679, 5e-324],
        nested: { z: [{ b: null, a: true }], '': 'empty key', ключ: false },
      },
    });
    await writer.close();
    const [stored] = await exportAll(t.db, tenantId);
    expect(stored?.hash).toBe(written.hash);
    expect(stored?.after).toBe(written.after);
    expect((await verifyAuditChain([stored])).ok).toBe(true);
  });

  it('records the writing process in every entry (metadata.writtenBy), sealed like the rest', async () => {
    const tenantId = await createTenant(t.db);
    const writer = createAuditWriter(t.db, { writtenBy: 'dp-east' });
    const plain = await writer.append({ ...base, tenantId });
    // A caller's own writtenBy cannot pass for another process.
    const claimed = await writer.append({ ...base, tenantId, metadata: { writtenBy: 'dp-west' } });
    await writer.close();
    expect(plain.metadata).toMatchObject({ writtenBy: 'dp-east' });
    expect(claimed.metadata).toMatchObject({ writtenBy: 'dp-east' });
    const exported = await exportAll(t.db, tenantId);
    expect(exported.map((entry) => entry.metadata?.writtenBy)).toEqual(['dp-east', 'dp-east']);
    expect(await verifyAuditChain(exported)).toMatchObject({ ok: true, count: 2 });
    // Edited afterwards, the name breaks the seal.
    (exported[1]!.metadata as Record<string, unknown>).writtenBy = 'dp-west';
    expect(await verifyAuditChain(exported)).toMatchObject({ ok: false });
  });

  it('refuses a maxBatch that is not a positive integer', () => {
    expect(() => createAuditWriter(t.db, { maxBatch: 0 })).toThrow(RangeError);
  });

  it('flushes on close, then refuses appends with AUDIT_WRITER_CLOSED', async () => {
    const tenantId = await createTenant(t.db);
    const writer = createAuditWriter(t.db);
    const pending = range(5).map(() => writer.append({ ...base, tenantId }));
    expect(writer.pending).toBe(5);
    await writer.close();
    expect(writer.pending).toBe(0);
    expect(await Promise.all(pending)).toHaveLength(5);
    expect(await storedSeqs(t.db, tenantId)).toEqual([1, 2, 3, 4, 5]);
    const error = await rejection(writer.append({ ...base, tenantId }));
    expect(error.code).toBe('AUDIT_WRITER_CLOSED');
  });
});
