// `agent-gateway token-key rotate` as an operator runs it on the embedded database (issue 22,
// item 14): on a stopped gateway's data directory it publishes a new key, writes it to the key
// file (0600) and retires the old one, which the gateway signs with from its next start; while the
// gateway runs it refuses (the data directory's lock) and changes nothing. What a running process
// on a shared database does with a rotation: tests/data-plane/oauth/token-key-rotation.test.ts.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  loadTokenSigningKey,
  registerTokenSigningKey,
  TOKEN_SIGNING_KEY_FILE,
} from '../../runtime/token-signing-key.js';
import { openDatabase } from '../../storage/engine/database.js';
import { migrateDatabase } from '../../storage/engine/migrations.js';
import { killCliProcesses, runCliToEnd } from '../support/cli-process.js';

afterEach(killCliProcesses);

interface KeyRow {
  readonly id: string;
  readonly retired: boolean;
}

describe('agent-gateway token-key rotate on the embedded database', () => {
  let dataDir: string;
  let firstKid: string;
  beforeAll(async () => {
    // A stopped gateway's data directory: migrated, with the key its first start made.
    dataDir = join(await mkdtemp(join(tmpdir(), 'agw-token-key-cli-')), 'data');
    const db = await openDatabase({ dataDir });
    try {
      await migrateDatabase(db);
      const key = await loadTokenSigningKey(dataDir);
      await registerTokenSigningKey(db, key);
      firstKid = key.kid;
    } finally {
      await db.close();
    }
    // A new embedded database runs initdb: a minute on a loaded 2-core machine.
  }, 180_000);
  afterAll(async () => {
    await rm(join(dataDir, '..'), { recursive: true, force: true });
  });
  const env = () => ({ AGENT_GATEWAY_DATA_DIR: dataDir });

  async function keyRows(): Promise<KeyRow[]> {
    const db = await openDatabase({ dataDir });
    try {
      return await db.query<KeyRow>(
        `select id, "retiredAt" is not null as retired from token_signing_keys order by "createdAt"`,
      );
    } finally {
      await db.close();
    }
  }

  it('refuses while the gateway holds the data directory, and changes nothing', async () => {
    const keyFile = await readFile(join(dataDir, TOKEN_SIGNING_KEY_FILE), 'utf8');
    const running = await openDatabase({ dataDir, lockOwner: { command: 'start' } });
    let result: Awaited<ReturnType<typeof runCliToEnd>>;
    try {
      result = await runCliToEnd(['token-key', 'rotate'], env());
    } finally {
      await running.close();
    }
    expect(result.code).toBe(1);
    const errors = result.stderr.filter((line) => /^[A-Z_]+: /.test(line));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^STORAGE_DATA_DIR_IN_USE: /);
    expect(await readFile(join(dataDir, TOKEN_SIGNING_KEY_FILE), 'utf8')).toBe(keyFile);
    expect(await keyRows()).toEqual([{ id: firstKid, retired: false }]);
  }, 120_000);

  it('publishes a new key, writes it to the key file and retires the old one', async () => {
    const result = await runCliToEnd(['token-key', 'rotate'], env());
    expect(result.code, result.stderr.join('\n')).toBe(0);
    const next = await loadTokenSigningKey(dataDir);
    expect(next.kid).not.toBe(firstKid);
    const text = result.stdout.join('\n');
    expect(text).toContain(`new token signing key ${next.kid}`);
    expect(text).toContain(`retired key ${firstKid}`);
    expect(text).toContain('from its next start');

    expect((await stat(join(dataDir, TOKEN_SIGNING_KEY_FILE))).mode & 0o777).toBe(0o600);
    expect((await readdir(dataDir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(await keyRows()).toEqual([
      { id: firstKid, retired: true },
      { id: next.kid, retired: false },
    ]);
  }, 120_000);

  it('has --help', async () => {
    const result = await runCliToEnd(['token-key', 'rotate', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout.join('\n')).toContain('AGENT_GATEWAY_DATA_DIR');
  }, 60_000);
});
