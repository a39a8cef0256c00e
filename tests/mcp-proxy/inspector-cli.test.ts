// A real MCP client nobody here wrote, over real HTTP: the MCP Inspector CLI
// (@modelcontextprotocol/inspector-cli 1.0.3, the last that runs on Node 20) lists tools, calls
// an allowed tool and gets the error of a denied one (issue 14, "Proof").
//
// Directly against the test upstream it shows what the CLI prints; through /mcp/{serverId} the
// list must be exactly the agent's permitted
// tools and a denied call must fail with the reasonCode in its message. The CLI's --header option
// carries the proxy's credentials: an agents:execute API key and X-Agent-Id. The invocation
// docs/mcp-proxy.md gives is run as written, read from the page, so the page cannot drift.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { REPO_ROOT } from '../support/cli-process.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../support/mcp-upstream.js';

const require = createRequire(import.meta.url);
const INSPECTOR_DIR = dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json'));
const INSPECTOR_BIN = join(INSPECTOR_DIR, 'build', 'cli.js');

interface InspectorRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The bin starts its CLI with `node` from PATH: our node's directory goes first on PATH. */
const PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH}`;

async function collect(child: ReturnType<typeof spawn>): Promise<InspectorRun> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** The shell block after "**The MCP Inspector CLI**" in docs/mcp-proxy.md. */
function documentedInvocation(): string {
  const page = readFileSync(join(REPO_ROOT, 'docs', 'mcp-proxy.md'), 'utf8');
  const from = page.indexOf('**The MCP Inspector CLI**');
  const block = /```sh\n([\s\S]*?)```/.exec(page.slice(from))?.[1];
  if (from < 0 || !block) throw new Error('docs/mcp-proxy.md has no MCP Inspector CLI command');
  return block;
}

/**
 * `mcp-inspector-cli --cli <url> --transport http <args…> --header …`, the bin run directly (no
 * npx start-up per call). It runs in the bin's own directory: 1.0.3 checks for `../package.json`
 * relative to the working directory but imports it relative to itself.
 */
async function inspector(
  url: string,
  args: readonly string[],
  headers: Readonly<Record<string, string>> = {},
): Promise<InspectorRun> {
  const headerArgs = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  const child = spawn(
    process.execPath,
    [
      INSPECTOR_BIN,
      '--cli',
      url,
      '--transport',
      'http',
      ...args,
      ...(headerArgs.length > 0 ? ['--header', ...headerArgs] : []),
    ],
    {
      cwd: join(INSPECTOR_DIR, 'build'),
      env: { ...process.env, PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return collect(child);
}

/** The JSON document the CLI printed for a successful method. */
function printed(run: InspectorRun): Record<string, unknown> {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

function toolNames(run: InspectorRun): string[] {
  return (printed(run).tools as { name: string }[]).map((tool) => tool.name).sort();
}

const ECHO_RESULT = {
  content: [{ type: 'text', text: JSON.stringify({ text: 'hello' }) }],
  structuredContent: { text: 'hello' },
};

describe('the MCP Inspector CLI against the test upstream directly', () => {
  let upstream: McpUpstream;
  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'sse', stateful: true });
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it('lists every tool and sends the headers it is given', async () => {
    const run = await inspector(upstream.url, ['--method', 'tools/list'], {
      Authorization: 'Bearer inspector-test',
      'X-Agent-Id': 'agent-1',
    });
    expect(toolNames(run)).toEqual([
      'drop_table',
      'echo',
      'fail',
      'notify_then_echo',
      'read_rows',
      'slow',
    ]);
    expect(upstream.log.length).toBeGreaterThan(0);
    for (const request of upstream.log) expect(request.authorization).toBe('Bearer inspector-test');
  });

  it('calls a tool with --tool-arg and prints its result; a tool error is a result', async () => {
    const echo = await inspector(upstream.url, [
      '--method',
      'tools/call',
      '--tool-name',
      'echo',
      '--tool-arg',
      'text=hello',
    ]);
    expect(printed(echo)).toEqual(ECHO_RESULT);
    const fail = await inspector(upstream.url, ['--method', 'tools/call', '--tool-name', 'fail']);
    expect(printed(fail)).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'failure requested' }],
    });
  });
});

describe('the MCP Inspector CLI through /mcp/{serverId}', () => {
  let upstream: McpUpstream;
  let gateway: TestGateway;
  let proxyUrl: string;
  let headers: Record<string, string>;
  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'sse', stateful: true });
    gateway = await startTestGateway('pglite');
    const tenantId = gateway.tenant.id;
    await gateway.registerServer({ tenantId, serverId: 'crm', url: upstream.url });
    await gateway.setPolicy(tenantId, { trustedServers: ['crm'], blockedTools: ['drop_table'] });
    const { id: agentId } = await createAgent(gateway.db, {
      tenantId,
      name: `inspector-${randomBytes(3).toString('hex')}`,
      allowedTools: ['echo', 'read_rows', 'drop_table'],
      mcpAudiences: ['mcp://crm'],
      publicKey: `test-key-${randomBytes(16).toString('hex')}`,
    });
    await gateway.sync();
    proxyUrl = `${gateway.url}/mcp/crm`;
    headers = { Authorization: `Bearer ${gateway.tenant.key}`, 'X-Agent-Id': agentId };
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it("lists exactly the agent's permitted tools, minus those the gateway policy blocks, with the command docs/mcp-proxy.md gives", async () => {
    // Run as written, from the repository root; npm offline: it finds the package in
    // this repository's node_modules.
    const child = spawn('sh', ['-c', documentedInvocation()], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        PATH,
        npm_config_offline: 'true',
        GATEWAY_URL: gateway.url,
        API_KEY: headers.Authorization!.slice('Bearer '.length),
        AGENT_ID: headers['X-Agent-Id'],
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(toolNames(await collect(child))).toEqual(['echo', 'read_rows']);
  });

  it("calls an allowed tool and prints the upstream's result", async () => {
    const before = upstream.calls.get('echo') ?? 0;
    const run = await inspector(
      proxyUrl,
      ['--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=hello'],
      headers,
    );
    expect(printed(run)).toEqual(ECHO_RESULT);
    expect(upstream.calls.get('echo')).toBe(before + 1);
  });

  it.each([
    { tool: 'fail', args: [], reasonCode: 'AGENT_TOOL_NOT_ALLOWED' },
    { tool: 'drop_table', args: ['--tool-arg', 'table=users'], reasonCode: 'MCP_METHOD_BLOCKED' },
  ])(
    'fails a denied call of $tool with $reasonCode, never reaching the upstream',
    async ({ tool, args, reasonCode }) => {
      const run = await inspector(
        proxyUrl,
        ['--method', 'tools/call', '--tool-name', tool, ...args],
        headers,
      );
      // A JSON-RPC error: the CLI prints "Failed to call tool <tool>: MCP error <code>: <message>".
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`Failed to call tool ${tool}`);
      expect(run.stderr).toContain(reasonCode);
      expect(upstream.calls.get(tool)).toBeUndefined();
    },
  );
});
