// The embedded database as the gateway runs it: PGlite in a worker thread, reached over the
// PostgreSQL wire protocol on a unix socket, so its query execution never blocks this thread.
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../../shared/audit/index.js';
import { GatewayError } from '../../../shared/errors/index.js';
import { LOCK_FILE_NAME } from '../../../storage/engine/data-dir-lock.js';
import { openDatabase } from '../../../storage/engine/database.js';
import { startEmbeddedServer } from '../../../storage/engine/embedded-server.js';
import { migrateDatabase } from '../../../storage/engine/migrations.js';
import { createAuditWriter } from '../../../storage/tables/audit-writer.js';
import { emptyPGliteTemplate } from '../../support/databases.js';
import { createTenant, exportAll } from '../fixtures/audit.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agw-embedded-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

// Two tests make a data directory with initdb (seconds of CPU each): room for a busy machine.
describe('the embedded database', { timeout: 120_000 }, () => {
  it('runs its queries off the main thread: a timer fires while a query runs', async () => {
    const db = await openDatabase({ pgliteTemplate: emptyPGliteTemplate() });
    cleanups.push(() => db.close());
    const order: string[] = [];
    const query = db.query('select pg_sleep(0.5)').then(() => order.push('query'));
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('timer');
        resolve();
      }, 20),
    );
    await Promise.all([query, timer]);
    expect(order).toEqual(['timer', 'query']);
  });

  it('opens a data directory made by the in-process PGlite 0.5.16 and keeps what it writes', async () => {
    const dataDir = await tempDir();
    const legacy = await PGlite.create(join(dataDir, 'pgdata'));
    await legacy.exec(`create table notes (id int primary key, body text);
      insert into notes values (1, 'written in-process')`);
    await legacy.close();

    const db = await openDatabase({ dataDir });
    expect(await db.query('select body from notes where id = 1')).toEqual([
      { body: 'written in-process' },
    ]);
    await db.query(`insert into notes values (2, 'written through the worker')`);
    await migrateDatabase(db);
    const tenantId = await createTenant(db);
    const writer = createAuditWriter(db);
    for (let i = 0; i < 3; i++)
      await writer.append({ tenantId, action: 'a', resourceType: 'r', resourceId: `${i}` });
    await writer.close();
    await db.close();
    expect(await exists(join(dataDir, LOCK_FILE_NAME))).toBe(false);
    expect(await exists(join(dataDir, '.s.PGSQL.5432'))).toBe(false);

    const reopened = await openDatabase({ dataDir });
    cleanups.push(() => reopened.close());
    expect(await reopened.query('select id from notes order by id')).toEqual([
      { id: 1 },
      { id: 2 },
    ]);
    expect(await verifyAuditChain(await exportAll(reopened, tenantId))).toMatchObject({
      ok: true,
      count: 3,
    });
  });

  it('replaces a socket file left behind in the data directory (a killed process leaves it)', async () => {
    const dataDir = await tempDir();
    const first = await openDatabase({ dataDir });
    await first.close();
    // A regular file stands in for the socket file a SIGKILL leaves behind.
    await writeFile(join(dataDir, '.s.PGSQL.5432'), '');
    const db = await openDatabase({ dataDir });
    cleanups.push(() => db.close());
    expect(await db.query('select 1 as one')).toEqual([{ one: 1 }]);
  });

  it('reports a worker that died as STORAGE_EMBEDDED_STOPPED, not as a bare socket error', async () => {
    const server = await startEmbeddedServer({
      maxConnections: 2,
      template: emptyPGliteTemplate(),
    });
    cleanups.push(() => server.close());
    const client = new pg.Client({ host: server.host, port: server.port, user: 'postgres' });
    client.on('error', () => {});
    await client.connect();
    expect((await client.query('select 2 as two')).rows).toEqual([{ two: 2 }]);
    expect(await server.checkAlive()).toBeNull();

    await server.worker!.terminate();
    const failure = await server.checkAlive();
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({ code: 'STORAGE_EMBEDDED_STOPPED' });
    expect(failure!.message).toContain('memory');
    expect(server.failure).toBe(failure);
    await expect(client.query('select 1')).rejects.toThrow();
  });
});
