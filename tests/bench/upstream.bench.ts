// Production forward overhead (DESIGN.md §10: ≤ 0.5 ms at p50): `UpstreamClient.forward` against
// calling the same upstream directly with a minimal undici request (same JSON body, same headers,
// a keep-alive Pool of its own), sequentially and with 16 calls in flight.
//
// Upstreams run in a child process so that their work does not share the client's event loop:
// a minimal raw node:http MCP-ish echo server (the SDK's own cost would hide ours), and the SDK
// upstream of tests/support/mcp-upstream.ts in JSON, stateful mode. Direct and forwarded calls
// alternate in rounds so that drift affects both alike; latencies are per call.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { createUpstreamClient, type UpstreamClient } from '../../data-plane/upstream/index.js';
import { RAW_ECHO_SERVER } from './echo-upstream.js';
import type { BenchContext, BenchRow } from './run.js';

const ROUNDS = 6;
const CALLS_PER_ROUND = 1_500;
const WARMUP_CALLS = 1_000;
const CONCURRENCY = 16;

const SDK_SERVER = `
import { startMcpUpstream } from ${JSON.stringify(
  fileURLToPath(new URL('../support/mcp-upstream.ts', import.meta.url)),
)};
const upstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
console.log(JSON.stringify({ url: upstream.url }));
`;

async function startChild(code: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    const { url } = JSON.parse(line) as { url: string };
    return { url, child };
  }
  throw new Error('upstream process exited before reporting its URL');
}

type Call = (i: number) => Promise<void>;

/** A direct client: initialize once like any MCP client, then POST each call on a keep-alive pool. */
async function directClient(url: string): Promise<{ call: Call; pool: Pool }> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { pipelining: 1 });
  const base: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const init = await pool.request({
    path: target.pathname,
    method: 'POST',
    headers: base,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'd', version: '1' },
      },
    }),
  });
  const sessionId = init.headers['mcp-session-id'];
  await init.body.text();
  const headers: Record<string, string> = { ...base, 'mcp-protocol-version': '2025-06-18' };
  if (typeof sessionId === 'string') headers['mcp-session-id'] = sessionId;
  const notified = await pool.request({
    path: target.pathname,
    method: 'POST',
    headers,
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  await notified.body.text();
  return {
    pool,
    call: async (i) => {
      const { body } = await pool.request({
        path: target.pathname,
        method: 'POST',
        headers,
        body: JSON.stringify(message(i)),
      });
      const response = JSON.parse(await body.text()) as { id: number };
      if (response.id !== i) throw new Error('direct: id mismatch');
    },
  };
}

function message(i: number) {
  return {
    jsonrpc: '2.0' as const,
    id: i,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'hello', n: 42 } },
  };
}

function forwardCall(client: UpstreamClient, url: string): Call {
  const target = { serverKey: 'bench/server', url };
  return async (i) => {
    const { response } = await client.forward({
      target,
      sessionKey: 'bench/agent/server',
      message: message(i),
    });
    if (response.id !== i) throw new Error('forward: id mismatch');
  };
}

/** Runs `count` calls with `concurrency` in flight; returns each call's latency in ms. */
async function measure(call: Call, count: number, concurrency: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const started = performance.now();
      await call(i);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return latencies;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const ms = (value: number) => Number(value.toFixed(3));

async function compare(
  ctx: BenchContext,
  label: string,
  direct: Call,
  forward: Call,
  concurrency: number,
): Promise<BenchRow> {
  await measure(direct, WARMUP_CALLS, concurrency);
  await measure(forward, WARMUP_CALLS, concurrency);
  const directLatencies: number[] = [];
  const forwardLatencies: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const which of order) {
      const sample = await measure(which === 0 ? direct : forward, CALLS_PER_ROUND, concurrency);
      (which === 0 ? directLatencies : forwardLatencies).push(...sample);
    }
  }
  directLatencies.sort((a, b) => a - b);
  forwardLatencies.sort((a, b) => a - b);
  const d50 = percentile(directLatencies, 50);
  const f50 = percentile(forwardLatencies, 50);
  ctx.progress(`${label}, ${concurrency} in flight: done`);
  return {
    upstream: label,
    'in flight': concurrency,
    calls: forwardLatencies.length,
    'direct p50 ms': ms(d50),
    'forward p50 ms': ms(f50),
    'overhead p50 ms': ms(f50 - d50),
    'direct p99 ms': ms(percentile(directLatencies, 99)),
    'forward p99 ms': ms(percentile(forwardLatencies, 99)),
  };
}

export default async function upstreamBench(ctx: BenchContext): Promise<void> {
  const rows: BenchRow[] = [];
  for (const [label, code] of [
    ['raw echo (JSON)', RAW_ECHO_SERVER],
    ['SDK McpServer (JSON, stateful)', SDK_SERVER],
  ] as const) {
    ctx.progress(`starting ${label}`);
    const { url, child } = await startChild(code);
    const direct = await directClient(url);
    const client = createUpstreamClient();
    const forward = forwardCall(client, url);
    try {
      for (const concurrency of [1, CONCURRENCY]) {
        rows.push(await compare(ctx, label, direct.call, forward, concurrency));
      }
    } finally {
      await client.close();
      await direct.pool.close();
      child.kill();
    }
  }
  ctx.report('Forward overhead vs a direct undici call (latency per call)', rows);
}
