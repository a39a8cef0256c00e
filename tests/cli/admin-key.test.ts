// `agent-gateway admin-key reset` as an operator runs it (issue 22 item 1): an installation whose
// every tenants:admin key is gone — the bootstrap key rotated away, its replacement expired — gets
// its administration back. On the embedded database the command refuses a running gateway's data
// directory (STORAGE_DATA_DIR_IN_USE) and works once it is stopped; on PostgreSQL it works while
// the gateway runs, which serves the new key with its next snapshot.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../shared/audit/index.js';
import { parseApiKey } from '../../shared/identity/api-keys.js';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import { openDatabase } from '../../storage/engine/database.js';
import { exportAuditTrail } from '../../storage/tables/audit-export.js';
import { errorCodes, graphql, type Loose } from '../control-plane/graphql/support.js';
import { type CliProcess, killCliProcesses, runCli, runCliToEnd } from '../support/cli-process.js';
import { dropSchema, postgresUrl, uniqueSchemaName } from '../support/databases.js';
import { until } from '../support/until.js';

afterEach(killCliProcesses);

const KEY = /^agk_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/;
const PRINTED_KEY = /^\s+(agk_[a-z0-9]{12}_[A-Za-z0-9_-]{43})$/;
const TENANTS = '{ tenants { name } }';
const CREATE_KEY =
  'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { apiKey { id } secret } }';

function oneErrorLine(stderr: string[], code: string): string {
  const lines = stderr.filter((line) => line.startsWith(`${code}: `));
  expect(lines, stderr.join('\n')).toHaveLength(1);
  return lines[0] as string;
}

/** Starts `agent-gateway start`; resolves with its URL and, on a first start, its admin key. */
async function startGateway(env: NodeJS.ProcessEnv) {
  const gateway = runCli(['start'], env);
  // A generous bound: the machine running the suite may be busy.
  const ready = await gateway.waitForLog('ready', 180_000);
  return { gateway, url: ready.url as string };
}

async function stop(gateway: CliProcess): Promise<void> {
  gateway.child.kill('SIGTERM');
  expect(await gateway.exited).toBe(0);
}

async function firstAdminKey(gateway: CliProcess): Promise<string> {
  return PRINTED_KEY.exec(await gateway.waitForStderr(PRINTED_KEY))?.[1] as string;
}

describe('agent-gateway admin-key reset on the embedded database', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agw-admin-key-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });
  const env = () => ({ AGENT_GATEWAY_DATA_DIR: dataDir, AGENT_GATEWAY_PORT: '0' });

  it('gives a locked-out installation a working admin key, audited; never while a gateway runs', async () => {
    // Lock the administrator out as it happens: the bootstrap key is rotated to a key that expires.
    const first = await startGateway(env());
    const bootstrap = await firstAdminKey(first.gateway);
    const q = (url: string, key: string, query: string, variables?: Record<string, unknown>) =>
      graphql<Record<string, Loose>>(url, key, query, variables);
    const expiring = await q(first.url, bootstrap, CREATE_KEY, {
      i: {
        name: 'short-lived admin',
        scopes: [...ALL_SCOPES],
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      },
    });
    expect(expiring.status).toBe(200);
    expect(expiring.errors).toBeUndefined();
    const temporary = expiring.data?.createApiKey.secret as string;
    const { me } = (await q(first.url, bootstrap, '{ me { apiKeyId } }')).data!;
    const revoked = await q(
      first.url,
      temporary,
      'mutation($id: ID!) { revokeApiKey(id: $id) { id } }',
      { id: me.apiKeyId },
    );
    expect(revoked.status).toBe(200);
    expect(revoked.data?.revokeApiKey.id).toBe(me.apiKeyId);
    expect((await q(first.url, bootstrap, TENANTS)).status).toBe(401);

    // A running gateway holds the data directory: the command says so and writes nothing.
    const refused = await runCliToEnd(['admin-key', 'reset', '--tenant', 'default'], env());
    expect(refused.code).toBe(1);
    expect(refused.stdout).toEqual([]);
    const inUse = oneErrorLine(refused.stderr, 'STORAGE_DATA_DIR_IN_USE');
    expect(inUse).toContain(String(first.gateway.child.pid));
    await stop(first.gateway);

    // The hour passes while the gateway is down (written into the table instead of waited for):
    // the short-lived key has expired, the last key that could administer the installation.
    const stopped = await openDatabase({ dataDir });
    try {
      await stopped.query(
        `update api_keys set "expiresAt" = now() - interval '1 minute' where name = 'short-lived admin'`,
      );
    } finally {
      await stopped.close();
    }

    const unknown = await runCliToEnd(['admin-key', 'reset', '--tenant', 'nope'], env());
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toEqual([]);
    const unknownLine = oneErrorLine(unknown.stderr, 'TENANT_UNKNOWN');
    expect(unknownLine).toContain('"nope"');
    expect(unknownLine).toContain('tenants: default');

    const reset = await runCliToEnd(['admin-key', 'reset', '--tenant', 'default'], env());
    expect(reset.code, reset.stderr.join('\n')).toBe(0);
    // Only the key on stdout, so `KEY=$(agent-gateway admin-key reset …)` works.
    expect(reset.stdout).toHaveLength(1);
    const key = reset.stdout[0] as string;
    expect(key).toMatch(KEY);
    expect(reset.stderr.join('\n')).toContain('tenant default');
    expect(reset.stderr.join('\n')).not.toContain(key);

    const db = await openDatabase({ dataDir });
    try {
      const keys = await db.query<{
        id: string;
        prefix: string;
        secretHash: string;
        scopes: string[];
        createdBy: string;
      }>('select id, prefix, "secretHash", scopes, "createdBy" from api_keys order by "createdAt"');
      // The refused attempts wrote nothing: bootstrap, short-lived, break-glass.
      expect(keys).toHaveLength(3);
      const minted = keys[2]!;
      expect(key).toContain(minted.prefix);
      expect([...minted.scopes].sort()).toEqual([...ALL_SCOPES].sort());
      expect(minted.createdBy).toBe('cli:admin-key reset');
      expect(JSON.stringify(keys)).not.toContain(parseApiKey(key)?.secret as string);
      const entries = [];
      for await (const entry of exportAuditTrail(db, { tenant: 'default' })) entries.push(entry);
      expect((await verifyAuditChain(entries)).ok).toBe(true);
      const last = entries.at(-1)!;
      expect(last).toMatchObject({
        action: 'api_key.created',
        resourceType: 'api_key',
        resourceId: minted.id,
        metadata: {
          actorType: 'operator',
          actor: 'cli:admin-key reset',
          breakGlass: true,
          prefix: minted.prefix,
        },
      });
    } finally {
      await db.close();
    }

    // The gateway started again serves the new key (a tenants:admin operation succeeds) and
    // neither of the keys the administrator was locked out with.
    const second = await startGateway(env());
    expect((await q(second.url, temporary, TENANTS)).status).toBe(401);
    expect((await q(second.url, bootstrap, TENANTS)).status).toBe(401);
    const created = await graphql<Record<string, Loose>>(
      second.url,
      key,
      'mutation($i: CreateTenantInput!) { createTenant(input: $i) { tenant { name } } }',
      { i: { name: 'after-reset' } },
    );
    expect(errorCodes(created)).toEqual([]);
    const listed = await graphql<Record<string, Loose>>(second.url, key, TENANTS);
    expect(listed.data?.tenants.map((t: { name: string }) => t.name)).toEqual([
      'after-reset',
      'default',
    ]);
    await stop(second.gateway);
  }, 600_000);

  it('--help names the command, its storage rules and its exit codes', async () => {
    const help = await runCliToEnd(['admin-key', 'reset', '--help']);
    expect(help.code).toBe(0);
    const text = help.stdout.join('\n');
    expect(text).toContain('--tenant <name>');
    expect(text).toContain('gateway.lock');
    expect(text).toContain('DATABASE_URL');
    expect(text).toContain('Exit codes');
  });
});

(postgresUrl ? describe : describe.skip)('agent-gateway admin-key reset on PostgreSQL', () => {
  const schema = uniqueSchemaName();
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agw-admin-key-pg-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await dropSchema(schema);
  });

  it('works while the gateway runs, which serves the new key with its next snapshot', async () => {
    const env = {
      DATABASE_URL: postgresUrl,
      AGENT_GATEWAY_DB_SCHEMA: schema,
      AGENT_GATEWAY_DATA_DIR: dataDir,
      AGENT_GATEWAY_PORT: '0',
    };
    const running = await startGateway(env);
    await firstAdminKey(running.gateway);
    const reset = await runCliToEnd(['admin-key', 'reset', '--tenant', 'default'], env);
    expect(reset.code, reset.stderr.join('\n')).toBe(0);
    const key = reset.stdout[0] as string;
    expect(key).toMatch(KEY);
    const listed = await until(
      () => graphql<Record<string, Loose>>(running.url, key, TENANTS),
      (answer) => answer.status === 200,
      'the running gateway to serve the new key',
    );
    expect(listed.data?.tenants).toEqual([{ name: 'default' }]);
    await stop(running.gateway);

    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      const audited = await client.query(
        `select metadata from "${schema}".audit_entries where action = 'api_key.created'
         order by seq desc limit 1`,
      );
      expect(audited.rows[0].metadata).toMatchObject({
        actor: 'cli:admin-key reset',
        breakGlass: true,
      });
    } finally {
      await client.end();
    }
  }, 400_000);
});
