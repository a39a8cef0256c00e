import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { verifyAuditChain } from '../../shared/audit/index.js';
import { parseApiKey } from '../../shared/identity/api-keys.js';
import { openDatabase } from '../../storage/engine/database.js';
import { exportAuditTrail } from '../../storage/tables/audit-export.js';
import { graphql } from '../control-plane/graphql/support.js';
import { connectWithApiKey, HOLD_ECHO_POLICY } from '../mcp-proxy/support.js';
import { killCliProcesses, runCli, runCliToEnd } from '../support/cli-process.js';
import { dropSchema, postgresUrl, uniqueSchemaName } from '../support/databases.js';
import { inspectBody, postAsClient } from '../support/gateway.js';
import { startMcpUpstream } from '../support/mcp-upstream.js';

afterEach(killCliProcesses);
// The timeouts below are failure bounds only, for a busy machine: every wait ends on an event, and
// a first start (initdb, migrations) took over 60 s on 2 cores shared with other suites.

const KEY_LINE = /^\s+(agk_[a-z0-9]{12}_[A-Za-z0-9_-]{43})$/;

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

function oneErrorLine(stderr: string[], code: string): string {
  const lines = stderr.filter((line) => line.startsWith(`${code}: `));
  expect(lines, stderr.join('\n')).toHaveLength(1);
  return lines[0] as string;
}

/** The key's secret part: base64url, so it may itself contain `_` (splitting on `_` would cut it). */
function secretOf(key: string): string {
  const parsed = parseApiKey(key);
  if (!parsed) throw new Error(`not an API key: ${key}`);
  return parsed.secret;
}

const HELD_SERVER = 'held';

/** Registers and trusts the upstream, pins HOLD_ECHO_POLICY, spawns an agent; its id. */
async function setUpHeldCalls(url: string, key: string, upstreamUrl: string): Promise<string> {
  const steps: [string, Record<string, unknown>][] = [
    [
      'mutation($i: RegisterMcpServerInput!) { registerMcpServer(input: $i) { serverId } }',
      { i: { serverId: HELD_SERVER, url: upstreamUrl } },
    ],
    [
      'mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) { __typename } }',
      { i: { trustedServers: [HELD_SERVER] } },
    ],
  ];
  for (const [query, variables] of steps) {
    expect((await graphql(url, key, query, variables)).errors).toBeUndefined();
  }
  const published = await graphql<{ publishNplPolicy: { data?: { uri: string } } }>(
    url,
    key,
    `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
       ... on MutationPublishNplPolicySuccess { data { uri } } } }`,
    { i: { source: HOLD_ECHO_POLICY } },
  );
  const uri = published.data?.publishNplPolicy.data?.uri as string;
  expect(uri).toBeDefined();
  const pinned = await graphql(url, key, 'mutation($uri: String!) { pinNplPolicy(uri: $uri) }', {
    uri,
  });
  expect(pinned.errors).toBeUndefined();
  const spawned = await postAsClient(
    `${url}/api/v1/agents/spawn`,
    {
      name: 'held-agent',
      system_prompt: '',
      persona: { tone: 'terse', language: 'en' },
      allowed_tools: ['*'],
      mcp_audiences: [`mcp://${HELD_SERVER}`],
    },
    { key },
  );
  expect(spawned.status).toBe(201);
  return ((await spawned.json()) as { agent: { id: string } }).agent.id;
}

describe('agent-gateway start on the embedded database', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agw-start-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });
  const env = () => ({ AGENT_GATEWAY_DATA_DIR: dataDir, AGENT_GATEWAY_PORT: '0' });

  it('creates the default tenant and an admin key on first start, prints it once, stores its hash', async () => {
    const gateway = runCli(['start'], env());
    const ready = await gateway.waitForLog('ready', 180_000);
    const url = ready.url as string;
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get(`${url}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } });

    // stderr and stdout are separate pipes: the key line may arrive after the `ready` log.
    const key = KEY_LINE.exec(await gateway.waitForStderr(KEY_LINE))?.[1] as string;
    const file = join(dataDir, 'admin-api-key');
    expect((await readFile(file, 'utf8')).trim()).toBe(key);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // The key never reaches the structured logs.
    expect(gateway.stdout.join('\n')).not.toContain(secretOf(key));

    // The README's container entry point (the bin as PID 1): SIGTERM ends it with status 0 and
    // releases the data directory (how long it may take is the shutdown timeout's to bound; a test
    // waiting on a busy machine does not measure it).
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false);
    expect(gateway.stderr.filter((line) => KEY_LINE.test(line))).toHaveLength(1);
    expect(gateway.stdout.some((line) => line.includes('audit queue flushed'))).toBe(true);

    const db = await openDatabase({ dataDir });
    try {
      const keys = await db.query<{ prefix: string; secretHash: string; scopes: string[] }>(
        'select prefix, "secretHash", scopes from api_keys',
      );
      expect(keys).toHaveLength(1);
      expect(key).toContain(keys[0]?.prefix);
      expect(keys[0]?.secretHash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(await db.query('select * from api_keys'))).not.toContain(secretOf(key));
      expect(keys[0]?.scopes).toEqual(expect.arrayContaining(['agents:execute', 'agents:manage']));
      const entries = [];
      for await (const entry of exportAuditTrail(db, { tenant: 'default' })) entries.push(entry);
      expect(entries.map((entry) => entry.action)).toEqual(['tenant.created', 'api_key.created']);
      expect((await verifyAuditChain(entries)).ok).toBe(true);
    } finally {
      await db.close();
    }
  }, 400_000);

  it('does not create another key on the next start', async () => {
    const gateway = runCli(['start'], env());
    await gateway.waitForLog('ready', 180_000);
    expect(gateway.stderr.some((line) => KEY_LINE.test(line))).toBe(false);
    gateway.child.kill('SIGINT');
    expect(await gateway.exited).toBe(0);
  }, 400_000);

  // Issue 25 item 1, as an operator meets it: an MCP SDK client holds a call through the proxy and
  // an agent long-polls an approval over REST when the gateway is stopped. Both waits end at once
  // with an answer the client can act on, the process exits 0 and releases the data directory;
  // after a restart the approval is decided and the same call, retried, resumes it and runs once.
  it('SIGTERM answers the held call APPROVAL_PENDING and the long-poll its state, exits 0; the retry after a restart resumes the approval', async () => {
    const upstream = await startMcpUpstream({ responseMode: 'sse', stateful: true });
    onTestFinished(() => upstream.close());
    const first = runCli(['start'], env());
    const url = (await first.waitForLog('ready', 180_000)).url as string;
    const key = (await readFile(join(dataDir, 'admin-api-key'), 'utf8')).trim();
    const agentId = await setUpHeldCalls(url, key, upstream.url);

    // An agent on REST: inspect holds its call, and it long-polls the approval.
    const inspected = await postAsClient(
      `${url}/api/v1/mcp/gateway/inspect`,
      inspectBody(agentId, { server: HELD_SERVER, args: { text: 'needs-human' } }),
      { key },
    );
    expect(inspected.status).toBe(202);
    const restApproval = ((await inspected.json()) as { approval: { id: string } }).approval.id;

    // An agent on MCP: its call is held open, and its first progress notice names the approval.
    const client = await connectWithApiKey(`${url}/mcp/${HELD_SERVER}`, key, agentId);
    let heldAs: (id: string) => void = () => {};
    const proxyApproval = new Promise<string>((resolve) => {
      heldAs = resolve;
    });
    const held = client
      .callTool({ name: 'echo', arguments: { text: 'needs-human' } }, undefined, {
        onprogress: (progress) => {
          const id = /held for approval (\S+):/.exec(progress.message ?? '')?.[1];
          if (id) heldAs(id);
        },
        timeout: 60_000,
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    const polled = fetch(`${url}/api/v1/mcp/gateway/approvals/${restApproval}?wait=30`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const approvalId = await proxyApproval;

    first.child.kill('SIGTERM');
    const [answer, poll, code] = await Promise.all([held, polled, first.exited]);
    expect(code, first.stdout.join('\n')).toBe(0);
    expect(first.stdout.join('\n')).not.toContain('shutdown timed out');
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false);
    expect(answer).toBeInstanceOf(McpError);
    expect((answer as McpError).data).toMatchObject({ reasonCode: 'APPROVAL_PENDING', approvalId });
    expect(poll.status).toBe(200);
    expect(await poll.json()).toMatchObject({ id: restApproval, status: 'pending' });
    await client.close().catch(() => {});

    // Back on the same data directory: approve, retry the same call, get the upstream's result.
    const second = runCli(['start'], env());
    const again = (await second.waitForLog('ready', 180_000)).url as string;
    const approved = await graphql<{ approveApproval: { status: string } }>(
      again,
      key,
      'mutation($id: ID!) { approveApproval(id: $id) { status } }',
      { id: approvalId },
    );
    expect(approved.data?.approveApproval.status).toBe('APPROVED');
    const retry = await connectWithApiKey(`${again}/mcp/${HELD_SERVER}`, key, agentId);
    try {
      const result = await retry.callTool({ name: 'echo', arguments: { text: 'needs-human' } });
      expect(result.structuredContent).toEqual({ text: 'needs-human' });
    } finally {
      await retry.close();
    }
    expect(upstream.calls.get('echo')).toBe(1);
    const used = await fetch(`${again}/api/v1/mcp/gateway/approvals/${approvalId}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(await used.json()).toMatchObject({ id: approvalId, status: 'used' });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 400_000);

  it('refuses a data directory another gateway holds, without touching it', async () => {
    const first = runCli(['start'], env());
    const ready = await first.waitForLog('ready', 180_000);
    const second = await runCliToEnd(['start'], env());
    expect(second.code).toBe(1);
    const line = oneErrorLine(second.stderr, 'STORAGE_DATA_DIR_IN_USE');
    expect(line).toContain(String(first.child.pid));
    expect(line).toContain(ready.url as string);
    expect((await get(`${ready.url}/readyz`)).status).toBe(200);

    // `audit export` cannot open the held database: it names the route and a line that works.
    const exported = await runCliToEnd(['audit', 'export', '--tenant', 'default'], env());
    expect(exported.code).toBe(1);
    oneErrorLine(exported.stderr, 'STORAGE_DATA_DIR_IN_USE');
    expect(exported.stderr.join('\n')).toContain('GET /api/v1/audit/export');
    const command = exported.stderr.find((line) => line.trimStart().startsWith('curl '));
    expect(command, exported.stderr.join('\n')).toContain(join(dataDir, 'admin-api-key'));
    const [curl, verify] = (command as string).trim().split(' && ');
    expect(verify).toBe('agent-gateway audit verify audit.json');
    const work = await mkdtemp(join(tmpdir(), 'agw-export-'));
    await promisify(execFile)('/bin/sh', ['-c', curl as string], { cwd: work });
    const verified = await runCliToEnd(['audit', 'verify', join(work, 'audit.json')]);
    await rm(work, { recursive: true, force: true });
    expect(verified.code, verified.stdout.join('\n')).toBe(0);
    expect(verified.stdout[0]).toMatch(/^OK: \d+ entries verified/);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  }, 400_000);

  it('fails with one line when the port is in use and releases the data directory', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = await runCliToEnd(['start'], { ...env(), AGENT_GATEWAY_PORT: String(port) });
      expect(result.code).toBe(1);
      expect(oneErrorLine(result.stderr, 'SERVER_PORT_IN_USE')).toContain(`127.0.0.1:${port}`);
    } finally {
      blocker.close();
    }
    const db = await openDatabase({ dataDir });
    await db.close();
  }, 400_000);
});

describe('agent-gateway start refuses bad configuration with one clear line', () => {
  it('rejects an invalid port (CONFIG_INVALID)', async () => {
    const result = await runCliToEnd(['start'], { AGENT_GATEWAY_PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(oneErrorLine(result.stderr, 'CONFIG_INVALID')).toContain('AGENT_GATEWAY_PORT');
  });

  it('refuses a split plane without DATABASE_URL, each with its own code', async () => {
    const env = { AGENT_GATEWAY_PUBLIC_URL: 'https://gw.example', AGENT_GATEWAY_PORT: '0' };
    const controlPlane = await runCliToEnd(['control-plane'], env);
    expect(controlPlane.code).toBe(1);
    const line = oneErrorLine(controlPlane.stderr, 'CONTROL_PLANE_REQUIRES_POSTGRES');
    expect(line).toMatch(/\(hint: Set DATABASE_URL .*docs\/deployment\.md/);
    const dataPlane = await runCliToEnd(['data-plane', 'register', '--name', 'dp-1'], env);
    expect(dataPlane.code).toBe(1);
    oneErrorLine(dataPlane.stderr, 'DATA_PLANE_REQUIRES_POSTGRES');
  });

  it('rejects a data directory it cannot create (STORAGE_DATA_DIR_UNWRITABLE)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agw-file-'));
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a directory');
    const result = await runCliToEnd(['start'], {
      AGENT_GATEWAY_DATA_DIR: join(file, 'data'),
      AGENT_GATEWAY_PORT: '0',
    });
    await rm(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    oneErrorLine(result.stderr, 'STORAGE_DATA_DIR_UNWRITABLE');
  });

  it('rejects a corrupt data directory (STORAGE_DATA_DIR_CORRUPT) and leaves it as it was', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agw-corrupt-'));
    await mkdir(join(dir, 'pgdata'));
    await writeFile(join(dir, 'pgdata', 'PG_VERSION'), 'garbage\n');
    const result = await runCliToEnd(['start'], {
      AGENT_GATEWAY_DATA_DIR: dir,
      AGENT_GATEWAY_PORT: '0',
    });
    const after = await readFile(join(dir, 'pgdata', 'PG_VERSION'), 'utf8');
    await rm(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    oneErrorLine(result.stderr, 'STORAGE_DATA_DIR_CORRUPT');
    expect(after).toBe('garbage\n');
  }, 400_000);

  it('rejects an unreachable DATABASE_URL (STORAGE_UNREACHABLE) without printing the password', async () => {
    const result = await runCliToEnd(['start'], {
      DATABASE_URL: 'postgresql://postgres:s3cret@127.0.0.1:1/test',
      AGENT_GATEWAY_PORT: '0',
    });
    expect(result.code).toBe(1);
    const line = oneErrorLine(result.stderr, 'STORAGE_UNREACHABLE');
    expect(line).toContain('127.0.0.1:1/test');
    expect(result.stderr.join('\n')).not.toContain('s3cret');
  });
});

(postgresUrl ? describe : describe.skip)('agent-gateway start on PostgreSQL', () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  it('two gateways starting at once create one tenant and one admin key', async () => {
    const schema = uniqueSchemaName();
    schemas.push(schema);
    const dirs = await Promise.all([1, 2].map(() => mkdtemp(join(tmpdir(), 'agw-pg-'))));
    // Every process that signs shares one master key (docs/agentiam.md): the first one to cut an
    // audit checkpoint seals the audit key, and a process whose key cannot open it stops
    // (MASTER_KEY_MISMATCH), whichever starts second.
    const masterKey = randomBytes(32).toString('hex');
    const gateways = dirs.map((dir) =>
      runCli(['start'], {
        DATABASE_URL: postgresUrl,
        AGENT_GATEWAY_DB_SCHEMA: schema,
        AGENT_GATEWAY_DATA_DIR: dir,
        AGENT_GATEWAY_PORT: '0',
        AGENT_GATEWAY_MASTER_KEY: masterKey,
      }),
    );
    const ready = await Promise.all(gateways.map((g) => g.waitForLog('ready', 180_000)));
    for (const line of ready) expect((await get(`${line.url}/readyz`)).status).toBe(200);
    const printedKeys = gateways.flatMap((g) => g.stderr.filter((line) => KEY_LINE.test(line)));
    expect(printedKeys).toHaveLength(1);
    for (const g of gateways) g.child.kill('SIGTERM');
    expect(await Promise.all(gateways.map((g) => g.exited))).toEqual([0, 0]);
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      const tenants = await client.query(`select count(*)::int as n from "${schema}".tenants`);
      const keys = await client.query(`select count(*)::int as n from "${schema}".api_keys`);
      expect([tenants.rows[0].n, keys.rows[0].n]).toEqual([1, 1]);
    } finally {
      await client.end();
    }
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }, 400_000);

  it('reports a failing migration (STORAGE_MIGRATION_FAILED) and applies none of it', async () => {
    const schema = uniqueSchemaName();
    schemas.push(schema);
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      await client.query(`create schema "${schema}"`);
      // A table in the way: the first migration's CREATE TABLE "tenants" fails.
      await client.query(`create table "${schema}".tenants (unrelated int)`);
      const dir = await mkdtemp(join(tmpdir(), 'agw-pg-'));
      const result = await runCliToEnd(['start'], {
        DATABASE_URL: postgresUrl,
        AGENT_GATEWAY_DB_SCHEMA: schema,
        AGENT_GATEWAY_DATA_DIR: dir,
        AGENT_GATEWAY_PORT: '0',
      });
      await rm(dir, { recursive: true, force: true });
      expect(result.code).toBe(1);
      expect(oneErrorLine(result.stderr, 'STORAGE_MIGRATION_FAILED')).toContain('_init');
      const tables = await client.query(
        'select table_name from information_schema.tables where table_schema = $1',
        [schema],
      );
      expect(tables.rows.map((row) => row.table_name)).toEqual(['tenants']);
    } finally {
      await client.end();
    }
  }, 400_000);
});
