// The end-to-end smoke: the README quickstart's three calls on a gateway started as `npm start`
// starts it (`dist/cli/main.js start`, on a fresh data directory), under whatever Node runs this
// file (process.execPath). tests/runtime/node-lines.test.ts runs it on every other supported Node
// line, so it stays one gateway process and a few seconds: the quickstart's MCP server and its
// setup script (client/examples/quickstart/), then the official MCP SDK client as the agent:
// search_docs is allowed, export_customers denied by the policy, send_payment of 250 held until
// an operator approves it over GraphQL.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { graphql } from '../control-plane/graphql/support.js';
import { type CliProcess, REPO_ROOT, runCli } from '../support/cli-process.js';

const QUICKSTART = 'client/examples/quickstart';
/** Failure timeouts only: every wait below ends on an event (a first start creates a database). */
const READY_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 240_000;

/** Starts the quickstart's MCP server on a free port; `url` resolves once it listens. */
function startQuickstartServer(): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, [join(QUICKSTART, 'server.mjs')], {
    cwd: REPO_ROOT,
    env: { ...process.env, QUICKSTART_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = (async () => {
    for await (const line of createInterface({ input: child.stdout! })) {
      const listening = /^quickstart MCP server: (\S+)$/.exec(line)?.[1];
      if (listening) return listening;
    }
    throw new Error('the quickstart server exited before listening');
  })();
  return { child, url };
}

describe('end-to-end smoke: npm start and the quickstart through the MCP proxy', () => {
  let dir: string | undefined;
  let gateway: CliProcess | undefined;
  let server: ChildProcess | undefined;

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await once(server, 'exit');
    }
    if (gateway && gateway.child.exitCode === null) {
      gateway.child.kill('SIGKILL');
      await gateway.exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    `starts on a fresh data directory and allows, denies and holds the quickstart's calls (Node ${process.version})`,
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'agw-smoke-'));
      const dataDir = join(dir, 'data');
      gateway = runCli(['start'], { AGENT_GATEWAY_DATA_DIR: dataDir, AGENT_GATEWAY_PORT: '0' });
      const upstream = startQuickstartServer();
      server = upstream.child;
      const [ready, serverUrl] = await Promise.all([
        gateway.waitForLog('ready', READY_TIMEOUT_MS),
        upstream.url,
      ]);
      const url = ready.url as string;
      const readyz = await fetch(`${url}/readyz`);
      expect({ status: readyz.status, body: await readyz.json() }).toEqual({
        status: 200,
        body: { status: 'ready' },
      });
      const adminKeyFile = join(dataDir, 'admin-api-key');
      const adminKey = (await readFile(adminKeyFile, 'utf8')).trim();
      expect(adminKey).toMatch(/^agk_/);

      // The quickstart's step 4 as written: register the server, trust it, publish and pin.
      const setup = await promisify(execFile)(process.execPath, [join(QUICKSTART, 'setup.mjs')], {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          GATEWAY_URL: url,
          ADMIN_KEY_FILE: adminKeyFile,
          QUICKSTART_PORT: new URL(serverUrl).port,
        },
      });
      expect(setup.stdout).toContain('published and pinned svc://quickstart-guard@1.0.0');

      // Step 5: an agent spawned with an OAuth client; the SDK finds the authorization server
      // from the proxy's 401 and gets its token by itself (as client/examples/quickstart/agent.mjs).
      const spawned = await fetch(`${url}/api/v1/agents/spawn`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'smoke-agent',
          system_prompt: 'You keep the books.',
          persona: { tone: 'terse', language: 'en' },
          allowed_tools: ['search_docs', 'export_customers', 'send_payment'],
          mcp_audiences: ['mcp://quickstart'],
        }),
      });
      expect(spawned.status).toBe(201);
      const { oauth } = (await spawned.json()) as {
        oauth: { client_id: string; client_secret: string };
      };
      const client = new Client({ name: 'smoke-agent', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${url}/mcp/quickstart`), {
          authProvider: new ClientCredentialsProvider({
            clientId: oauth.client_id,
            clientSecret: oauth.client_secret,
            expectedIssuer: url,
          }),
        }),
      );
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual([
          'search_docs',
          'export_customers',
          'send_payment',
        ]);

        const allowed = await client.callTool({
          name: 'search_docs',
          arguments: { query: 'expenses' },
        });
        expect(allowed.content).toEqual([{ type: 'text', text: '3 pages mention "expenses"' }]);

        const denied = await client
          .callTool({ name: 'export_customers', arguments: { segment: 'all' } })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(denied).toBeInstanceOf(McpError);
        expect((denied as McpError).data).toMatchObject({
          reasonCode: 'NPL_POLICY_BLOCK',
          ruleId: 'no_customer_exports',
        });

        // Held: the call stays open and its first progress notice names the approval.
        let approvalHeld: (id: string) => void = () => {};
        const approvalId = new Promise<string>((resolve) => {
          approvalHeld = resolve;
        });
        const held = client.callTool(
          { name: 'send_payment', arguments: { to: 'acme', amount: 250 } },
          undefined,
          {
            onprogress: (progress) => {
              const id = /held for approval (\S+):/.exec(progress.message ?? '')?.[1];
              if (id) approvalHeld(id);
            },
            timeout: TEST_TIMEOUT_MS,
          },
        );
        const approved = await graphql<{ approveApproval: { status: string } }>(
          url,
          adminKey,
          'mutation($id: ID!) { approveApproval(id: $id) { status } }',
          { id: await approvalId },
        );
        expect(approved.errors).toBeUndefined();
        // USED: the waiting call resumed before the mutation read the approval back.
        expect(['APPROVED', 'USED']).toContain(approved.data?.approveApproval.status);
        expect((await held).content).toEqual([{ type: 'text', text: 'paid 250 to acme' }]);
      } finally {
        await client.close();
      }

      // A graceful stop: SIGTERM drains and exits 0.
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited, gateway.stderr.join('\n')).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );
});
