// The MCP proxy's cost (issue 14 budgets): the official SDK `Client` with
// `StreamableHTTPClientTransport` calling a trivial tool (`echo`) of an SDK upstream
// (tests/support/mcp-upstream.ts, stateful, SSE answers: the SDK server's defaults), (a) straight
// to the upstream and (b) through `<gateway>/mcp/<serverId>` on a gateway as `npm start` runs it
// (PGlite, logger at info to /dev/null, one pinned NPL policy evaluated per call), with an
// agents:execute API key and X-Agent-Id.
// - Sequential: one session per path, warm-up, then rounds alternating direct and proxied calls so
//   that drift hits both; overhead = proxy p50 − direct p50 (budget ≤ 0.5 ms).
// - Throughput: 50 sessions (50 SDK clients), each calling in a loop for a fixed count after a
//   warm-up; ratio = proxied calls/s ÷ direct calls/s (budget ≥ 60 %).
//
// The same again for MCP 2026-07-28 (issue 27): the SDK v2 `Client` pinned to 2026-07-28 (one
// POST per call with the revision's `_meta` and headers) calling `echo` of an SDK v2 server
// (tests/support/mcp-v2-upstream.ts, `createMcpHandler`), straight and through the proxy; the
// same two budgets.
//
// Three processes: the upstream and the clients each run in a child process (this file, started
// with `upstream`, `stateless-upstream` or `client <spec>`), so that neither shares the gateway's
// event loop.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pino from 'pino';
import type { TestGateway } from '../support/gateway.js';
import { startMcpUpstream } from '../support/mcp-upstream.js';
import { startMcpV2Upstream } from '../support/mcp-v2-upstream.js';
import type { BenchContext, BenchRow } from './run.js';

const THIS_FILE = fileURLToPath(import.meta.url);
const SERVER_ID = 'bench';
const STATELESS_SERVER_ID = 'bench-stateless';

const SEQUENTIAL = { warmup: 300, rounds: 5, callsPerRound: 400 };
const THROUGHPUT = { sessions: 50, warmupPerSession: 20, callsPerSession: 100 };
const BUDGET = { overheadP50Ms: 0.5, throughputRatio: 0.6 };

const POLICY = {
  version: '1.0.0',
  policyName: 'mcp-proxy-bench',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'block_secrets',
      action: 'BLOCK',
      condition: "tool.name == 'echo' && args.text == 'secret'",
      alertSeverity: 'CRITICAL',
    },
  ],
};

interface Target {
  readonly name: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** How the client speaks: the SDK over a session, or stateless POSTs (2026-07-28). */
  readonly era: 'session' | 'stateless';
}

/** What a bench client calls `echo` through. */
interface EchoClient {
  echo(i: number): Promise<void>;
  close(): Promise<void>;
}

type ClientSpec =
  | {
      readonly kind: 'sequential';
      readonly targets: readonly Target[];
      readonly warmup: number;
      readonly rounds: number;
      readonly callsPerRound: number;
    }
  | {
      readonly kind: 'throughput';
      readonly target: Target;
      readonly sessions: number;
      readonly warmupPerSession: number;
      readonly callsPerSession: number;
    };

interface LatencySummary {
  readonly name: string;
  readonly calls: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

interface ThroughputSummary {
  readonly calls: number;
  readonly seconds: number;
  readonly callsPerSecond: number;
}

// ---- child processes --------------------------------------------------------------------------

async function connect(target: Target): Promise<EchoClient> {
  if (target.era === 'stateless') return connectStateless(target);
  const client = new Client({ name: 'mcp-proxy-bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(target.url), {
    requestInit: { headers: { ...target.headers } },
  });
  await client.connect(transport);
  return {
    async echo(i) {
      const result = await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
      if (result.isError) throw new Error(`echo failed: ${JSON.stringify(result)}`);
    },
    close: () => client.close(),
  };
}

/** The SDK v2 client pinned to 2026-07-28: no initialize, each call one POST. */
async function connectStateless(target: Target): Promise<EchoClient> {
  const client = new ClientV2(
    { name: 'mcp-proxy-bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const transport = new StreamableHTTPClientTransportV2(new URL(target.url), {
    requestInit: { headers: { ...target.headers } },
  });
  await client.connect(transport);
  return {
    async echo(i) {
      const result = await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
      if (result.isError) throw new Error(`echo failed: ${JSON.stringify(result)}`);
    },
    close: () => client.close(),
  };
}

async function runSequentialClient(
  spec: Extract<ClientSpec, { kind: 'sequential' }>,
): Promise<LatencySummary[]> {
  const clients = await Promise.all(spec.targets.map(connect));
  for (const client of clients) for (let i = 0; i < spec.warmup; i++) await client.echo(i);
  const samples = spec.targets.map(() => [] as number[]);
  for (let round = 0; round < spec.rounds; round++) {
    for (const [t, client] of clients.entries()) {
      for (let i = 0; i < spec.callsPerRound; i++) {
        const started = performance.now();
        await client.echo(i);
        samples[t]!.push(performance.now() - started);
      }
    }
  }
  await Promise.all(clients.map((client) => client.close()));
  return spec.targets.map((target, t) => {
    const sorted = samples[t]!.sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
    return {
      name: target.name,
      calls: sorted.length,
      mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
      p50: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
    };
  });
}

async function runThroughputClient(
  spec: Extract<ClientSpec, { kind: 'throughput' }>,
): Promise<ThroughputSummary> {
  const clients = await Promise.all(
    Array.from({ length: spec.sessions }, () => connect(spec.target)),
  );
  const loop = async (client: EchoClient, count: number) => {
    for (let i = 0; i < count; i++) await client.echo(i);
  };
  await Promise.all(clients.map((client) => loop(client, spec.warmupPerSession)));
  const started = performance.now();
  await Promise.all(clients.map((client) => loop(client, spec.callsPerSession)));
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(clients.map((client) => client.close()));
  const calls = spec.sessions * spec.callsPerSession;
  return { calls, seconds, callsPerSecond: calls / seconds };
}

async function child(mode: string | undefined, arg: string | undefined): Promise<void> {
  if (mode === 'upstream') {
    const upstream = await startMcpUpstream({ responseMode: 'sse', stateful: true });
    console.log(JSON.stringify({ url: upstream.url }));
    return;
  }
  if (mode === 'stateless-upstream') {
    const upstream = await startMcpV2Upstream({ legacy: 'reject' });
    console.log(JSON.stringify({ url: upstream.url }));
    return;
  }
  if (mode === 'client' && arg) {
    const spec = JSON.parse(arg) as ClientSpec;
    const result =
      spec.kind === 'sequential'
        ? await runSequentialClient(spec)
        : await runThroughputClient(spec);
    console.log(JSON.stringify(result));
    process.exit(0);
  }
  throw new Error(`unknown mode ${mode}`);
}

if (process.argv[1] === THIS_FILE) await child(process.argv[2], process.argv[3]);

// ---- the suite ----------------------------------------------------------------------------------

function spawnSelf(args: readonly string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', THIS_FILE, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function startUpstreamProcess(
  mode: 'upstream' | 'stateless-upstream',
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawnSelf([mode]);
  for await (const line of createInterface({ input: child.stdout! })) {
    return { url: (JSON.parse(line) as { url: string }).url, child };
  }
  throw new Error('the upstream process exited before reporting its URL');
}

async function runClient<T>(spec: ClientSpec): Promise<T> {
  const child = spawnSelf(['client', JSON.stringify(spec)]);
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`the client process exited with ${code}`);
  return JSON.parse(output.trim().split('\n').at(-1) ?? '') as T;
}

/** A gateway as `npm start` runs it, the upstreams registered, an agent permitted `echo`. */
async function proxyTargets(
  gateway: TestGateway,
  sessionUrl: string,
  statelessUrl: string,
): Promise<{ session: Target; stateless: Target }> {
  const { createAgent } = await import('../../control-plane/services/agents.js');
  const tenantId = gateway.tenant.id;
  await gateway.registerServer({ tenantId, serverId: SERVER_ID, url: sessionUrl });
  await gateway.registerServer({ tenantId, serverId: STATELESS_SERVER_ID, url: statelessUrl });
  const policy = await gateway.publishPolicy(tenantId, POLICY);
  await gateway.setPolicy(tenantId, {
    trustedServers: [SERVER_ID, STATELESS_SERVER_ID],
    allowedModes: ['production'],
    pinnedPolicies: [policy],
  });
  const { id: agentId } = await createAgent(gateway.db, {
    tenantId,
    name: 'mcp-proxy-bench',
    allowedTools: ['echo'],
    mcpAudiences: [`mcp://${SERVER_ID}`],
    publicKey: `bench-key-${randomBytes(16).toString('hex')}`,
  });
  await gateway.sync();
  const headers = { authorization: `Bearer ${gateway.tenant.key}`, 'x-agent-id': agentId };
  return {
    session: {
      name: 'through /mcp/{serverId}',
      url: `${gateway.url}/mcp/${SERVER_ID}`,
      headers,
      era: 'session',
    },
    stateless: {
      name: '2026-07-28 through /mcp/{serverId}',
      url: `${gateway.url}/mcp/${STATELESS_SERVER_ID}`,
      headers,
      era: 'stateless',
    },
  };
}

const ms = (value: number) => Number(value.toFixed(3));

export default async function mcpProxyBench(ctx: BenchContext): Promise<void> {
  ctx.progress('starting the SDK v1 and v2 upstreams (child processes)');
  const upstream = await startUpstreamProcess('upstream');
  const statelessUpstream = await startUpstreamProcess('stateless-upstream');
  let gateway: TestGateway | undefined;
  try {
    ctx.progress('starting a PGlite gateway (npm start logging)');
    // Imported here: the child processes (this file too) need none of the gateway.
    const { createLogger } = await import('../../cli/logger.js');
    const { startTestGateway } = await import('../support/gateway.js');
    const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }));
    gateway = await startTestGateway('pglite', { logger });
    const proxied = await proxyTargets(gateway, upstream.url, statelessUpstream.url);
    await measure(
      ctx,
      'SDK Client + StreamableHTTPClientTransport (2025-11-25 session)',
      { name: 'SDK client → upstream directly', url: upstream.url, headers: {}, era: 'session' },
      proxied.session,
    );
    await measure(
      ctx,
      'SDK v2 Client pinned to 2026-07-28 (stateless)',
      {
        name: 'SDK v2 client → upstream directly',
        url: statelessUpstream.url,
        headers: {},
        era: 'stateless',
      },
      proxied.stateless,
    );
  } finally {
    await gateway?.close();
    upstream.child.kill('SIGTERM');
    statelessUpstream.child.kill('SIGTERM');
  }
}

/** The two budgets for one client kind: sequential overhead, then throughput at 50 clients. */
async function measure(
  ctx: BenchContext,
  clientKind: string,
  direct: Target,
  proxied: Target,
): Promise<void> {
  const targets = [direct, proxied];
  const calls = SEQUENTIAL.rounds * SEQUENTIAL.callsPerRound;
  ctx.progress(
    `${clientKind}: sequential tools/call, ${calls} per path after ${SEQUENTIAL.warmup} warm-up`,
  );
  const sequential = await runClient<LatencySummary[]>({
    kind: 'sequential',
    targets,
    ...SEQUENTIAL,
  });
  const base = sequential[0]!;
  ctx.report(
    `tools/call of a trivial tool, ${clientKind}, sequential, ${SEQUENTIAL.rounds} interleaved rounds (budget: proxy p50 overhead ≤ ${BUDGET.overheadP50Ms} ms)`,
    sequential.map(
      (r): BenchRow => ({
        path: r.name,
        calls: r.calls,
        'mean ms': ms(r.mean),
        'p50 ms': ms(r.p50),
        'p90 ms': ms(r.p90),
        'p99 ms': ms(r.p99),
        'overhead p50 ms': ms(r.p50 - base.p50),
        'overhead p99 ms': ms(r.p99 - base.p99),
        budget: r === base ? '' : r.p50 - base.p50 <= BUDGET.overheadP50Ms ? 'met' : 'NOT MET',
      }),
    ),
  );

  const rows: BenchRow[] = [];
  let directRate = 0;
  for (const target of targets) {
    ctx.progress(
      `${THROUGHPUT.sessions} clients × ${THROUGHPUT.callsPerSession} calls: ${target.name}`,
    );
    const result = await runClient<ThroughputSummary>({
      kind: 'throughput',
      target,
      ...THROUGHPUT,
    });
    if (target === direct) directRate = result.callsPerSecond;
    const ratio = result.callsPerSecond / directRate;
    rows.push({
      path: target.name,
      clients: THROUGHPUT.sessions,
      calls: result.calls,
      seconds: Number(result.seconds.toFixed(2)),
      'calls/s': Math.round(result.callsPerSecond),
      'of direct': `${Math.round(ratio * 100)} %`,
      budget: target === direct ? '' : ratio >= BUDGET.throughputRatio ? 'met' : 'NOT MET',
    });
  }
  ctx.report(
    `tools/call throughput, ${clientKind}, ${THROUGHPUT.sessions} concurrent clients, ${THROUGHPUT.callsPerSession} calls each after ${THROUGHPUT.warmupPerSession} (budget: ≥ ${BUDGET.throughputRatio * 100} % of direct)`,
    rows,
  );
}
