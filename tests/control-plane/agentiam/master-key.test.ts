// The master key as an operator meets it, through the real CLI: `agent-gateway start` without
// AGENT_GATEWAY_MASTER_KEY makes `<dataDir>/master-key` (mode 0600) on first start and seals the
// tenant CA key under it; a start whose master key (from the variable or the file) cannot open
// the sealed key fails before it is ready, with one MASTER_KEY_MISMATCH line naming the key and
// where the master key came from; the right key given as the variable starts; a malformed one is
// MASTER_KEY_INVALID.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../storage/engine/database.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { killCliProcesses, runCli, runCliToEnd } from '../../support/cli-process.js';
import { graphql, type Loose } from '../graphql/support.js';

afterEach(killCliProcesses);

const KEY_LINE = /^\s+(agk_[a-z0-9]{12}_[A-Za-z0-9_-]{43})$/;

/** The first JSON log line with this message. */
function logLine(stdout: string[], message: string): Record<string, unknown> | undefined {
  for (const line of stdout) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line) as Record<string, unknown>;
    if (parsed.msg === message) return parsed;
  }
  return undefined;
}

function oneErrorLine(stderr: string[], code: string): string {
  const lines = stderr.filter((line) => line.startsWith(`${code}: `));
  expect(lines, stderr.join('\n')).toHaveLength(1);
  return lines[0] as string;
}

describe('the master key of agent-gateway start', () => {
  let dataDir: string;
  let keyFile: string;
  let sealedKeyId: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agw-master-key-'));
    keyFile = join(dataDir, 'master-key');
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });
  const env = (extra: Record<string, string> = {}) => ({
    AGENT_GATEWAY_DATA_DIR: dataDir,
    AGENT_GATEWAY_PORT: '0',
    AGENT_GATEWAY_MASTER_KEY: '',
    ...extra,
  });

  it('is made as <dataDir>/master-key (0600) on first start and seals the CA key of the first issue', async () => {
    const gateway = runCli(['start'], env());
    const ready = await gateway.waitForLog('ready', 180_000);
    const url = ready.url as string;
    const adminKey = KEY_LINE.exec(await gateway.waitForStderr(KEY_LINE))?.[1] as string;
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await readFile(keyFile, 'utf8')).trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(logLine(gateway.stdout, 'master key opened')).toMatchObject({
      source: keyFile,
      sealedKeys: 0,
    });

    const created = await graphql<Loose>(
      url,
      adminKey,
      'mutation ($key: String!) { createAgent(input: { name: "a", publicKey: $key, allowedTools: ["search"] }) { id } }',
      { key: newAgentPublicKey() },
    );
    expect(created.errors).toBeUndefined();
    const issued = await fetch(`${url}/api/v1/agentiam/credentials/issue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({
        agent_id: created.data.createAgent.id,
        supervising_user_id: 'alice',
      }),
    });
    expect(issued.status).toBe(201);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);

    const db = await openDatabase({ dataDir });
    try {
      const keys = await db.prisma.tenantSigningKey.findMany();
      expect(keys).toHaveLength(1);
      sealedKeyId = keys[0]!.id;
      expect(keys[0]!.privateKeySealed).toMatch(/^v1\./);
    } finally {
      await db.close();
    }
  }, 400_000);

  it('refuses to start with another key in AGENT_GATEWAY_MASTER_KEY: MASTER_KEY_MISMATCH', async () => {
    const result = await runCliToEnd(
      ['start'],
      env({ AGENT_GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') }),
    );
    expect(result.code).toBe(1);
    const line = oneErrorLine(result.stderr, 'MASTER_KEY_MISMATCH');
    expect(line).toContain('AGENT_GATEWAY_MASTER_KEY');
    expect(line).toContain(sealedKeyId);
    expect(logLine(result.stdout, 'ready')).toBeUndefined();
  }, 400_000);

  it('refuses to start with another key in the key file: MASTER_KEY_MISMATCH naming the file', async () => {
    const original = await readFile(keyFile, 'utf8');
    await writeFile(keyFile, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
    try {
      const result = await runCliToEnd(['start'], env());
      expect(result.code).toBe(1);
      expect(oneErrorLine(result.stderr, 'MASTER_KEY_MISMATCH')).toContain(keyFile);
    } finally {
      await writeFile(keyFile, original, { mode: 0o600 });
    }
  }, 400_000);

  it('starts with the same key given as AGENT_GATEWAY_MASTER_KEY', async () => {
    const key = (await readFile(keyFile, 'utf8')).trim();
    const gateway = runCli(['start'], env({ AGENT_GATEWAY_MASTER_KEY: key }));
    await gateway.waitForLog('ready', 180_000);
    expect(logLine(gateway.stdout, 'master key opened')).toMatchObject({
      source: 'AGENT_GATEWAY_MASTER_KEY',
      // The tenant's CA key and the audit checkpoint key the first start made.
      sealedKeys: 2,
    });
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
  }, 400_000);

  it('refuses a malformed AGENT_GATEWAY_MASTER_KEY before anything starts: MASTER_KEY_INVALID', async () => {
    const result = await runCliToEnd(['start'], env({ AGENT_GATEWAY_MASTER_KEY: 'not-a-key' }));
    expect(result.code).toBe(1);
    expect(oneErrorLine(result.stderr, 'MASTER_KEY_INVALID')).toContain('AGENT_GATEWAY_MASTER_KEY');
  }, 400_000);
});
