import { afterEach, describe, expect, it } from 'vitest';
import { KeyUsageRecorder } from '../../data-plane/key-usage.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../support/databases.js';
import { inspectBody, startTestGateway } from '../support/gateway.js';

describeEachDatabase('API key lastUsedAt', (kind) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('is written in batches and never moves backwards', async () => {
    t = await createTestDatabase(kind);
    await t.db.query(`insert into tenants (id, name, "updatedAt") values ('t1', 'one', now())`);
    await t.db.query(
      `insert into api_keys (id, "tenantId", prefix, "secretHash", name, scopes)
       values ('k1', 't1', 'p1', 'h', 'n', '{}'), ('k2', 't1', 'p2', 'h', 'n', '{}')`,
    );
    const recorder = new KeyUsageRecorder(t.db, { intervalMs: 60_000 });
    recorder.record('k1', Date.parse('2026-01-02T00:00:00Z'));
    await recorder.flush();
    recorder.record('k1', Date.parse('2026-01-01T00:00:00Z'));
    await recorder.stop();
    const rows = await t.db.query<{ id: string; lastUsedAt: Date | null }>(
      'select id, "lastUsedAt" from api_keys order by id',
    );
    expect(rows.map((row) => [row.id, row.lastUsedAt?.toISOString() ?? null])).toEqual([
      ['k1', '2026-01-02T00:00:00.000Z'],
      ['k2', null],
    ]);
  });
});

describe('the gateway records key use', () => {
  it('sets lastUsedAt of the key an inspect call used, by the time the gateway stops', async () => {
    const gateway = await startTestGateway('pglite');
    try {
      await gateway.inspect(inspectBody(gateway.tenant.agentId));
      await gateway.runtime.stop();
      const rows = await gateway.db.query<{ lastUsedAt: Date | null }>(
        `select "lastUsedAt" from api_keys where "tenantId" = $1`,
        [gateway.tenant.id],
      );
      expect(rows[0]?.lastUsedAt).toBeInstanceOf(Date);
    } finally {
      await gateway.close();
    }
  });
});
