import { afterEach, expect, it } from 'vitest';
import { IssuedTokenRecorder } from '../../../data-plane/oauth/issued-tokens.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../../support/databases.js';

describeEachDatabase('IssuedTokenRecorder', (kind) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  const token = (jti: string, tenantId = 't1') => ({
    jti,
    tenantId,
    clientId: null,
    agentId: 'a1',
    audience: 'mcp://files',
    scope: '',
    issuedAt: 1_800_000_000,
    expiresAt: 1_800_000_300,
  });

  it('writes queued tokens in one batch, keeps a revoked row as it is, and survives a failed batch', async () => {
    t = await createTestDatabase(kind);
    await t.db.query(`insert into tenants (id, name, "updatedAt") values ('t1', 'one', now())`);
    // Revoked before the recorder wrote it (POST /oauth/revoke inserts the row).
    await t.db.query(
      `insert into issued_tokens (id, "tenantId", "agentId", audience, "issuedAt", "expiresAt", "revokedAt")
       values ('j2', 't1', 'a1', 'mcp://files', now(), now(), now())`,
    );
    const recorder = new IssuedTokenRecorder(t.db, { intervalMs: 60_000 });
    recorder.record(token('j1'));
    recorder.record(token('j2'));
    await recorder.flush();
    const rows = await t.db.query<{ id: string; revoked: boolean; issuedAt: Date }>(
      `select id, "revokedAt" is not null as revoked, "issuedAt" from issued_tokens order by id`,
    );
    expect(rows.map((row) => [row.id, row.revoked])).toEqual([
      ['j1', false],
      ['j2', true],
    ]);
    expect(rows[0]?.issuedAt.toISOString()).toBe(new Date(1_800_000_000_000).toISOString());

    // A batch the database refuses (unknown tenant) is lost; the next one is written.
    recorder.record(token('j3', 'no-such-tenant'));
    await expect(recorder.flush()).rejects.toThrow();
    recorder.record(token('j4'));
    await recorder.stop();
    const ids = await t.db.query<{ id: string }>('select id from issued_tokens order by id');
    expect(ids.map((row) => row.id)).toEqual(['j1', 'j2', 'j4']);
  });
});
