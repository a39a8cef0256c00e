// `agent-gateway audit export` as an operator runs it: a real child process reading a PGlite data
// directory or a PostgreSQL schema, its output piped into `agent-gateway audit verify -`.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../shared/audit/index.js';
import type { Database } from '../../storage/engine/database.js';
import { openDatabase } from '../../storage/engine/database.js';
import { migrateDatabase } from '../../storage/engine/migrations.js';
import { createAuditWriter } from '../../storage/tables/audit-writer.js';
import { createTenant, exportAll, range } from '../storage/fixtures/audit.js';
import { CLI_ENTRY, REPO_ROOT, runCliToEnd } from '../support/cli-process.js';
import {
  createTestDatabase,
  dropSchema,
  postgresUrl,
  type TestDatabase,
  uniqueSchemaName,
} from '../support/databases.js';

const EMBEDDED = { DATABASE_URL: '', AGENT_GATEWAY_DB_SCHEMA: '' };

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [CLI_ENTRY, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, CI: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

async function finished(child: ChildProcess): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** `audit export <args> | audit verify <verifyArgs> -`, both exit codes and outputs. */
async function exportIntoVerify(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  verifyArgs: readonly string[] = [],
): Promise<{ exporter: Finished; verifier: Finished }> {
  const exporter = cli(['audit', 'export', ...args], env);
  const verifier = cli(['audit', 'verify', ...verifyArgs, '-'], env);
  exporter.stdin!.end();
  exporter.stdout!.pipe(verifier.stdin!);
  const [e, v] = await Promise.all([finished(exporter), finished(verifier)]);
  return { exporter: e, verifier: v };
}

function oneErrorLine(stderr: string, code: string): string {
  const lines = stderr.split('\n').filter((line) => line.startsWith(`${code}: `));
  expect(lines, stderr).toHaveLength(1);
  return lines[0]!;
}

async function fillTenant(db: Database, name: string): Promise<string> {
  const tenantId = await createTenant(db, name);
  let clock = Date.UTC(2030, 0, 1);
  const writer = createAuditWriter(db, { now: () => clock });
  for (const day of [1, 2]) {
    clock = Date.UTC(2030, 0, day);
    await Promise.all(
      range(60).map((i) =>
        writer.append({
          tenantId,
          action: 'test.append',
          resourceType: 'thing',
          resourceId: `r${i}`,
          metadata: { day, i, text: 'ünïcödé 😀' },
        }),
      ),
    );
  }
  await writer.close();
  return tenantId;
}

describe('agent-gateway audit export (embedded database)', () => {
  let root: string;
  let dataDir: string;
  let tenantId: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'agw-audit-export-'));
    dataDir = join(root, 'data');
    const db = await openDatabase({ dataDir });
    try {
      await migrateDatabase(db);
      tenantId = await fillTenant(db, 'acme');
    } finally {
      await db.close();
    }
  }, 60_000);
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('streams a chain that `audit verify -` accepts', async () => {
    const { exporter, verifier } = await exportIntoVerify(
      ['--tenant', 'acme', '--data-dir', dataDir],
      EMBEDDED,
    );
    expect(exporter.code, exporter.stderr).toBe(0);
    expect(exporter.stderr).toContain(`120 entries of tenant acme (${tenantId})`);
    expect(verifier.code, verifier.stdout + verifier.stderr).toBe(0);
    expect(verifier.stdout).toContain('OK: 120 entries verified');
  }, 30_000);

  it('writes a dated slice to --output, reading AGENT_GATEWAY_DATA_DIR', async () => {
    const file = join(root, 'slice.json');
    const result = await runCliToEnd(
      ['audit', 'export', '--tenant', tenantId, '--from', '2030-01-02', '--output', file],
      { ...EMBEDDED, AGENT_GATEWAY_DATA_DIR: dataDir },
    );
    expect(result.code, result.stderr.join('\n')).toBe(0);
    expect(result.stdout).toEqual([]);
    expect(result.stderr.join('\n')).toContain('verify with --partial');
    const entries = JSON.parse(await readFile(file, 'utf8')) as { createdAt: string }[];
    expect(entries).toHaveLength(60);
    expect(entries.every((entry) => entry.createdAt.startsWith('2030-01-02'))).toBe(true);
    expect(await verifyAuditChain(entries, { partial: true })).toMatchObject({ ok: true });
    const verify = await runCliToEnd(['audit', 'verify', '--partial', file]);
    expect(verify.code).toBe(0);
    expect((await readdir(root)).filter((name) => name.includes('.partial-'))).toEqual([]);
  }, 30_000);

  it('refuses a data directory a running gateway holds, without opening it', async () => {
    const busy = join(root, 'busy');
    await mkdir(join(busy, 'pgdata'), { recursive: true });
    const lock = { pid: process.pid, url: 'http://127.0.0.1:48080', startedAt: new Date() };
    await writeFile(join(busy, 'gateway.lock'), JSON.stringify(lock));
    const result = await runCliToEnd(['audit', 'export', '--tenant', 'acme', '--data-dir', busy], {
      ...EMBEDDED,
    });
    expect(result.code).toBe(1);
    const line = oneErrorLine(result.stderr.join('\n'), 'STORAGE_DATA_DIR_IN_USE');
    expect(line).toContain(`in use by process ${process.pid} serving http://127.0.0.1:48080`);
    expect(line).toContain('DATABASE_URL');
    // No admin key file in that directory: the route is named with a key of the operator's.
    expect(result.stderr).toContain(
      '  curl -fsS -H "authorization: Bearer $AUDITOR_KEY" http://127.0.0.1:48080/api/v1/audit/export -o audit.json && agent-gateway audit verify audit.json',
    );
    expect(result.stdout).toEqual([]);
    expect(await readdir(join(busy, 'pgdata'))).toEqual([]);
    expect(JSON.parse(await readFile(join(busy, 'gateway.lock'), 'utf8')).pid).toBe(process.pid);
  }, 30_000);

  it('names an unknown tenant and writes nothing', async () => {
    const result = await runCliToEnd(
      ['audit', 'export', '--tenant', 'nobody', '--data-dir', dataDir],
      EMBEDDED,
    );
    expect(result.code).toBe(1);
    expect(oneErrorLine(result.stderr.join('\n'), 'AUDIT_TENANT_UNKNOWN')).toContain('"nobody"');
    expect(result.stdout).toEqual([]);
  }, 30_000);

  it('rejects a bad --from as a usage error (exit 2)', async () => {
    const result = await runCliToEnd(
      ['audit', 'export', '--tenant', 'acme', '--data-dir', dataDir, '--from', 'yesterday'],
      EMBEDDED,
    );
    expect(result.code).toBe(2);
    expect(oneErrorLine(result.stderr.join('\n'), 'CONFIG_INVALID')).toContain(
      '--from "yesterday" is invalid',
    );
  }, 30_000);

  it('says when the data directory holds no database, and does not create one', async () => {
    const missing = join(root, 'missing');
    const result = await runCliToEnd(
      ['audit', 'export', '--tenant', 'acme', '--data-dir', missing],
      EMBEDDED,
    );
    expect(result.code).toBe(1);
    oneErrorLine(result.stderr.join('\n'), 'STORAGE_DATA_DIR_MISSING');
    await expect(readdir(missing)).rejects.toMatchObject({ code: 'ENOENT' });
  }, 30_000);

  it('documents storage selection and exit codes in --help', async () => {
    const result = await runCliToEnd(['audit', 'export', '--help']);
    expect(result.code).toBe(0);
    const help = result.stdout.join('\n');
    for (const text of ['--tenant <id|name>', 'AGENT_GATEWAY_DB_SCHEMA', 'Exit codes']) {
      expect(help).toContain(text);
    }
  }, 30_000);
});

(postgresUrl ? describe : describe.skip)('agent-gateway audit export (PostgreSQL)', () => {
  let t: TestDatabase;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await createTestDatabase('postgres');
    await fillTenant(t.db, 'acme');
    env = { DATABASE_URL: postgresUrl, AGENT_GATEWAY_DB_SCHEMA: t.schema };
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('streams a chain that `audit verify -` accepts, from the schema AGENT_GATEWAY_DB_SCHEMA names', async () => {
    const { exporter, verifier } = await exportIntoVerify(['--tenant', 'acme'], env);
    expect(exporter.code, exporter.stderr).toBe(0);
    expect(verifier.code, verifier.stdout + verifier.stderr).toBe(0);
    expect(verifier.stdout).toContain('OK: 120 entries verified');
    const head = (await exportAll(t.db, 'acme')).at(-1)!.hash;
    expect(exporter.stderr).toContain(`hash ${head}`);
  }, 30_000);

  it('says so when the database was never migrated', async () => {
    const schema = uniqueSchemaName();
    try {
      const result = await runCliToEnd(['audit', 'export', '--tenant', 'acme'], {
        ...env,
        AGENT_GATEWAY_DB_SCHEMA: schema,
      });
      expect(result.code).toBe(1);
      expect(oneErrorLine(result.stderr.join('\n'), 'STORAGE_NOT_MIGRATED')).toContain(
        'has never been migrated',
      );
    } finally {
      await dropSchema(schema);
    }
  }, 30_000);
});
