// The audit writer across process boundaries: two processes appending to one PostgreSQL keep one
// chain per tenant, and a writer killed with SIGKILL leaves a chain that verifies and holds every
// entry whose append had resolved (the child prints an id only after its promise resolved).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../../shared/audit/index.js';
import { openDatabase } from '../../../storage/engine/database.js';
import { migrateDatabase } from '../../../storage/engine/migrations.js';
import {
  createTestDatabase,
  describeEachDatabase,
  postgresUrl,
  type TestDatabase,
} from '../../support/databases.js';
import { createTenant, exportAll, storedSeqs } from '../fixtures/audit.js';

const CHILD = join(import.meta.dirname, '..', 'fixtures', 'audit-append-child.ts');

interface Child {
  readonly process: ChildProcess;
  readonly ids: string[];
  readonly exited: Promise<number | null>;
  /** Resolves once the child printed `ready`. */
  readonly ready: Promise<void>;
  /** Resolves once `count` ids were printed. */
  printed(count: number): Promise<void>;
}

function startChild(env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    cwd: join(import.meta.dirname, '..', '..'),
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const ids: string[] = [];
  let markReady = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const waiting: { count: number; resolve: () => void }[] = [];
  let stderr = '';
  let rest = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      if (line === 'ready') markReady();
      else if (line !== 'done') ids.push(line);
    }
    for (const w of waiting.filter((w) => ids.length >= w.count)) w.resolve();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => {
      if (code !== 0 && code !== null) console.error(stderr);
      resolve(code);
    });
  });
  return {
    process: child,
    ids,
    exited,
    ready,
    printed: (count) =>
      new Promise<void>((resolve, reject) => {
        if (ids.length >= count) return resolve();
        waiting.push({ count, resolve });
        void exited.then((code) => reject(new Error(`child exited (${code}): ${stderr}`)));
      }),
  };
}

describe('audit appends from two processes sharing one PostgreSQL', () => {
  let t: TestDatabase | undefined;
  afterAll(async () => {
    await t?.dispose();
  });

  (postgresUrl ? it : it.skip)(
    'form one unbroken chain per tenant',
    async () => {
      t = await createTestDatabase('postgres');
      const tenants = [await createTenant(t.db), await createTenant(t.db)];
      const env = {
        AUDIT_CHILD_URL: postgresUrl!,
        AUDIT_CHILD_SCHEMA: t.schema!,
        AUDIT_CHILD_TENANTS: tenants.join(','),
        AUDIT_CHILD_COUNT: '400',
        AUDIT_CHILD_CONCURRENCY: '16',
      };
      const children = [startChild(env), startChild(env)];
      expect(await Promise.all(children.map((child) => child.exited))).toEqual([0, 0]);
      const printed = new Set(children.flatMap((child) => child.ids));
      expect(printed.size).toBe(800);
      const exported = (await Promise.all(tenants.map((id) => exportAll(t!.db, id)))).flat();
      expect(new Set(exported.map((entry) => entry.id))).toEqual(printed);
      for (const tenantId of tenants) {
        expect(await verifyAuditChain(await exportAll(t.db, tenantId))).toMatchObject({
          ok: true,
          count: 400,
        });
        expect(await storedSeqs(t.db, tenantId)).toEqual(
          Array.from({ length: 400 }, (_, i) => i + 1),
        );
      }
      // Both processes really interleaved in each chain.
      const writers = new Set(exported.map((entry) => entry.resourceId));
      expect(writers.size).toBe(2);
    },
    60_000,
  );
});

describeEachDatabase('an audit writer killed with SIGKILL', (kind) => {
  let dataDir: string | undefined;
  let t: TestDatabase | undefined;
  beforeAll(async () => {
    if (kind === 'pglite') dataDir = await mkdtemp(join(tmpdir(), 'audit-kill-'));
  });
  afterAll(async () => {
    await t?.dispose();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('leaves a chain that verifies and holds every entry whose append resolved', async () => {
    let env: Record<string, string>;
    let tenantId: string;
    let childApplication: string | undefined;
    if (kind === 'pglite') {
      const db = await openDatabase({ dataDir });
      await migrateDatabase(db);
      tenantId = await createTenant(db);
      await db.close();
      env = { AUDIT_CHILD_DATA_DIR: dataDir! };
    } else {
      t = await createTestDatabase('postgres');
      tenantId = await createTenant(t.db);
      childApplication = `audit-kill-${t.schema}`.slice(0, 63);
      const url = new URL(postgresUrl!);
      url.searchParams.set('application_name', childApplication);
      env = { AUDIT_CHILD_URL: url.toString(), AUDIT_CHILD_SCHEMA: t.schema! };
    }
    const child = startChild({
      ...env,
      AUDIT_CHILD_TENANTS: tenantId,
      AUDIT_CHILD_COUNT: '0',
      AUDIT_CHILD_CONCURRENCY: '16',
    });
    await child.printed(400);
    child.process.kill('SIGKILL');
    expect(await child.exited).toBeNull();
    const printed = [...child.ids];

    // The dead child's lock on the data directory is stale: this open takes it over.
    const db = kind === 'pglite' ? await openDatabase({ dataDir }) : t!.db;
    if (childApplication !== undefined) {
      // The server completes (or rolls back) the killed child's last transaction on its own: wait
      // until its connections are gone, so the chain read below is final.
      while (
        (
          await db.query<{ n: number }>(
            'select count(*)::int as n from pg_stat_activity where application_name = $1',
            [childApplication],
          )
        )[0]?.n !== 0
      ) {
        await new Promise((next) => setTimeout(next, 10));
      }
    }
    try {
      const exported = await exportAll(db, tenantId);
      const result = await verifyAuditChain(exported);
      expect(result).toMatchObject({ ok: true });
      const stored = new Set(exported.map((entry) => entry.id));
      expect(printed.filter((id) => !stored.has(id))).toEqual([]);
      expect(exported.length).toBeGreaterThanOrEqual(printed.length);
      const heads = await db.query<{ seq: string | number; hash: string }>(
        `select seq, hash from audit_chain_heads where "tenantId" = $1`,
        [tenantId],
      );
      expect(Number(heads[0]?.seq)).toBe(exported.length);
      expect(heads[0]?.hash).toBe(exported.at(-1)?.hash);
    } finally {
      if (kind === 'pglite') await db.close();
    }
  }, 60_000);
});
