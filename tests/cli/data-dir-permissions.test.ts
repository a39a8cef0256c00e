// The data directory is private to the gateway's user whatever umask it was started with (issue
// 22, item 9): the directory and every directory under it 0700, every file 0600, including the
// files the embedded database writes while it runs; a directory left readable by others (an
// older version, a copy, a library user's umask) is tightened at start, with one log line.
import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, killCliProcesses, runCli } from '../support/cli-process.js';

afterEach(killCliProcesses);

const KEY_LINE = /^\s+(agk_[a-z0-9]{12}_[A-Za-z0-9_-]{43})$/;
const TIGHTENED = 'data directory permissions tightened: group and other access removed';

interface Entry {
  readonly path: string;
  readonly mode: number;
  readonly isDir: boolean;
}

/** Every directory and file under `dir` (itself included), without following links. */
async function walk(dir: string): Promise<Entry[]> {
  const entries: Entry[] = [{ path: dir, mode: (await lstat(dir)).mode & 0o777, isDir: true }];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) entries.push(...(await walk(path)));
    else entries.push({ path, mode: (await lstat(path)).mode & 0o777, isDir: false });
  }
  return entries;
}

function readableByOthers(entries: readonly Entry[]): string[] {
  return entries
    .filter((entry) => (entry.mode & 0o077) !== 0)
    .map((entry) => `${entry.path} ${entry.mode.toString(8)}`);
}

async function stop(gateway: CliProcess): Promise<void> {
  gateway.child.kill('SIGTERM');
  expect(await gateway.exited).toBe(0);
}

describe('the data directory under umask 000', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'agw-perms-')), 'data');
  });
  afterAll(async () => {
    await rm(join(dataDir, '..'), { recursive: true, force: true });
  });
  const env = () => ({ AGENT_GATEWAY_DATA_DIR: dataDir, AGENT_GATEWAY_PORT: '0' });

  it('is created 0700 with every file 0600 and every directory 0700, after writes', async () => {
    const gateway = runCli(['start'], env(), { umask: '000' });
    const { url } = (await gateway.waitForLog('ready', 170_000)) as { url: string };
    const key = KEY_LINE.exec(await gateway.waitForStderr(KEY_LINE))?.[1] as string;
    // A few writes of our own beside the first start's (tenant, key, audit entries).
    for (const name of ['perm-1', 'perm-2', 'perm-3']) {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({
          query: `mutation { createApiKey(input: { name: "${name}", scopes: ["audit:read"] }) { apiKey { id } } }`,
        }),
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { errors?: unknown }).errors).toBeUndefined();
    }
    const whileRunning = await walk(dataDir);
    await stop(gateway);
    const afterStop = await walk(dataDir);

    expect(afterStop.filter((entry) => !entry.isDir).length).toBeGreaterThan(100);
    expect(readableByOthers(whileRunning)).toEqual([]);
    expect(readableByOthers(afterStop)).toEqual([]);
    for (const entry of afterStop) expect(entry.mode).toBe(entry.isDir ? 0o700 : 0o600);
    // Nothing needed tightening: everything was made private.
    expect(gateway.stdout.filter((line) => line.includes(TIGHTENED))).toEqual([]);
  }, 240_000);

  it('is tightened at the next start when it was left readable by others, logged once', async () => {
    const before = await walk(dataDir);
    for (const entry of before) await chmod(entry.path, entry.isDir ? 0o777 : 0o666);

    const gateway = runCli(['start'], env(), { umask: '000' });
    const log = await gateway.waitForLog(TIGHTENED, 170_000);
    expect(log).toMatchObject({ level: 40, dataDir, entries: before.length });
    await gateway.waitForLog('ready', 170_000);
    expect(readableByOthers(await walk(dataDir))).toEqual([]);
    await stop(gateway);
    expect(gateway.stdout.filter((line) => line.includes(TIGHTENED))).toHaveLength(1);
  }, 240_000);
});
