// The examples run as a new user runs them after `npm start`: child processes with the admin key
// file, against one real gateway (a test gateway listening on loopback), importing the built
// @agent-gateway/client and the MCP SDK. client/examples/governed-tool.mjs makes an allowed call
// that ran the tool and a denied call that did not; the quickstart (client/examples/quickstart/:
// server, setup, agent) allows, denies and holds its three calls. Each example owns its names, so
// they run in either order and each runs again unchanged, and governed-tool leaves nothing
// registered behind it (its server lives as long as the example). A held call whose wait ran out
// is reported as waiting, not denied, and the same call made again after the approval goes
// through. A gateway that is not there is one line naming GATEWAY_URL, not a stack trace.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import { graphql } from '../control-plane/graphql/support.js';
import { type SpawnTestGateway, startSpawnGateway } from '../control-plane/spawn/support.js';
import { quickDatabaseKind } from '../data-plane/inspect/support.js';

const root = join(import.meta.dirname, '..', '..');
const GOVERNED_TOOL = 'client/examples/governed-tool.mjs';
const SETUP = 'client/examples/quickstart/setup.mjs';
const AGENT = 'client/examples/quickstart/agent.mjs';

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** One example as a child process; asynchronous, since the gateway lives in this event loop. */
function runExample(script: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [script],
      { cwd: root, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ status: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

/** A loopback port nothing listens on (it was free a moment ago and nobody took it since). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

describe('the examples, in either order, against one gateway', () => {
  let gateway: SpawnTestGateway;
  let dir: string;
  let adminKey: string;
  let quickstartServer: ChildProcess;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    if (!existsSync(join(root, 'client', 'dist', 'index.js'))) {
      spawnSync('npm', ['run', 'build', '--workspace', '@agent-gateway/client'], { cwd: root });
    }
    // The quickstart's MCP server on a free port (QUICKSTART_PORT=0 prints the one it took).
    quickstartServer = spawn(process.execPath, ['client/examples/quickstart/server.mjs'], {
      cwd: root,
      env: { ...process.env, QUICKSTART_PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const listening = (async () => {
      for await (const line of createInterface({ input: quickstartServer.stdout! })) {
        const port = /^quickstart MCP server: http:\/\/127\.0\.0\.1:(\d+)\/mcp$/.exec(line)?.[1];
        if (port) return port;
      }
      throw new Error('the quickstart server exited before listening');
    })();
    gateway = await startSpawnGateway(quickDatabaseKind, { servers: {} });
    // A held call's wait ends at once: what a user sees when approvalWaitSeconds runs out.
    await gateway.setPolicy(gateway.tenant.id, { approvalWaitSeconds: 0 });
    dir = await mkdtemp(join(tmpdir(), 'client-example-'));
    adminKey = await gateway.addApiKey(gateway.tenant.id, [...ALL_SCOPES]);
    await writeFile(join(dir, 'admin-api-key'), `${adminKey}\n`, { mode: 0o600 });
    env = {
      GATEWAY_URL: gateway.url,
      ADMIN_KEY_FILE: join(dir, 'admin-api-key'),
      QUICKSTART_PORT: await listening,
    };
  }, 120_000);
  afterAll(async () => {
    if (quickstartServer?.exitCode === null) {
      quickstartServer.kill('SIGTERM');
      await once(quickstartServer, 'exit');
    }
    await gateway?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function governedTool(): Promise<void> {
    const run = await runExample(GOVERNED_TOOL, env);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([
      'allowed call:',
      '  (the tool runs: transferring 120 to acme)',
      '  result: {"transferred":120,"to":"acme"}',
      'denied call:',
      expect.stringMatching(
        /^ {2}GatewayDenied: NPL_POLICY_BLOCK \(rule no_large_transfers, audit [0-9a-f-]{36}\)$/,
      ),
    ]);
    // Its server lived as long as the example: neither registered nor trusted afterwards.
    const { data } = await graphql<{
      mcpServers: { serverId: string }[];
      gatewayPolicy: { trustedServers: string[] };
    }>(gateway.url, adminKey, '{ mcpServers { serverId } gatewayPolicy { trustedServers } }');
    expect(data?.mcpServers.map((server) => server.serverId)).not.toContain('governed-tool');
    expect(data?.gatewayPolicy.trustedServers).not.toContain('governed-tool');
  }

  async function setup(): Promise<void> {
    const run = await runExample(SETUP, env);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([
      `registered MCP server quickstart -> http://127.0.0.1:${env.QUICKSTART_PORT}/mcp`,
      'published and pinned svc://quickstart-guard@1.0.0: export_customers is denied, send_payment > 100 waits for a human',
    ]);
  }

  async function agent(): Promise<string[]> {
    const run = await runExample(AGENT, env);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.slice(1, 4)).toEqual([
      'tools: search_docs, export_customers, send_payment',
      'search_docs: 3 pages mention "expenses"',
      'export_customers: denied NPL_POLICY_BLOCK (rule no_customer_exports)',
    ]);
    return lines;
  }

  it('governed-tool, the quickstart, governed-tool again and setup again all succeed; an approved call goes through on the rerun', async () => {
    await governedTool();
    await setup();

    const first = await agent();
    expect(first[0]).toMatch(/^spawned agent quickstart-agent \([0-9a-f-]{36}\)$/);
    const agentId = /\((.+)\)/.exec(first[0]!)![1]!;
    // The wait ran out: still waiting, not denied, and where to approve it.
    const pending = first.at(-1)!;
    const approvalId = /^send_payment: still waiting for approval (\S+) after 0 s: /.exec(
      pending,
    )?.[1];
    expect(pending).toBe(
      `send_payment: still waiting for approval ${approvalId} after 0 s: approve it at ${gateway.url}/console/approvals and run the agent again`,
    );
    expect(first.join('\n')).not.toContain('denied APPROVAL_PENDING');

    const approved = await graphql<{ approveApproval: { status: string } }>(
      gateway.url,
      adminKey,
      'mutation($id: ID!) { approveApproval(id: $id) { status } }',
      { id: approvalId },
    );
    expect(approved.data?.approveApproval.status).toBe('APPROVED');
    // The same agent makes the same call: the proxy resumes that approval, and it passes.
    const second = await agent();
    expect(second[0]).toBe(`reusing agent quickstart-agent (${agentId}) with a new OAuth client`);
    expect(second).toContain(`  approval ${approvalId} is approved`);
    expect(second.at(-1)).toBe('send_payment: paid 250 to acme');

    await governedTool();
    await setup();
  }, 120_000); // a failure guard: six example processes, each starting node and the MCP SDK

  it('prints one line naming GATEWAY_URL and exits 1 when nothing listens there', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const runs = await Promise.all(
      [SETUP, AGENT, GOVERNED_TOOL].map((script) =>
        runExample(script, { ...env, GATEWAY_URL: url }),
      ),
    );
    for (const run of runs) {
      expect(run.stderr).toBe(
        `cannot reach the gateway at ${url} (GATEWAY_URL): is \`npm start\` running? (ECONNREFUSED)\n`,
      );
      expect(run.stdout).toBe('');
      expect(run.status).toBe(1);
    }
  });
});
