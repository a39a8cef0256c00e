// Inspect end to end over real HTTP, against the budgets of DESIGN.md §10, in one run:
//   - a bare Fastify JSON endpoint (same machine, same process kind, a body of the same size);
//   - inspect allow (simulation): ≥ 60 % of the bare endpoint's throughput, p99 ≤ 2 ms at 50
//     connections;
//   - inspect deny (server not whitelisted, audit entry durable before the answer) on PGlite and
//     PostgreSQL (DATABASE_URL; skipped without it): p99 ≤ 5 ms;
//   - a production forward through the gateway against calling the same upstream directly:
//     ≤ 0.5 ms more at p50 (sequential calls, interleaved).
// Servers (bare Fastify, the gateways) run in this process; the load generator (load.ts) runs in
// a child process, and so does the upstream, so that neither shares the measured event loop.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { postgresUrl } from '../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';
import { RAW_ECHO_SERVER } from './echo-upstream.js';
import type { LatencySummary, LoadRequest, LoadResult, LoadSpec } from './load.js';
import type { BenchContext, BenchRow } from './run.js';

const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = 6;
/** Bare and allow alternate for this many rounds, so that machine drift hits both. */
const ROUNDS = 2;
const SEQUENTIAL_WARMUP = 500;
const SEQUENTIAL_CALLS = 2_000;

const BUDGET = {
  allowThroughputRatio: 0.6,
  allowP99Ms: 2,
  denyP99Ms: 5,
  forwardOverheadP50Ms: 0.5,
};

const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url));

async function startUpstream(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', RAW_ECHO_SERVER], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for await (const line of createInterface({ input: child.stdout! })) {
    return { url: (JSON.parse(line) as { url: string }).url, child };
  }
  throw new Error('upstream process exited before reporting its URL');
}

async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', LOAD_SCRIPT, JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`load generator exited with ${code}`);
  return JSON.parse(output.trim().split('\n').at(-1)!) as LoadResult;
}

async function throughput(
  request: LoadRequest,
  connections = CONNECTIONS,
): Promise<Extract<LoadResult, { kind: 'throughput' }>> {
  const result = await runLoad({
    kind: 'throughput',
    request,
    connections,
    warmupSeconds: WARMUP_SECONDS,
    durationSeconds: DURATION_SECONDS,
  });
  if (result.kind !== 'throughput') throw new Error('unexpected load result');
  return result;
}

function post(url: string, body: unknown, expectStatus: number, key?: string): LoadRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  return { url, method: 'POST', headers, body: JSON.stringify(body), expectStatus };
}

const ms = (value: number) => Number(value.toFixed(3));

function loadRow(
  scenario: string,
  connections: number,
  result: Extract<LoadResult, { kind: 'throughput' }>,
): BenchRow {
  return {
    scenario,
    connections,
    'req/s': Math.round(result.rps),
    'p50 ms': ms(result.p50),
    'p90 ms': ms(result.p90),
    'p99 ms': ms(result.p99),
    'max ms': ms(result.max),
    'unexpected/errors': `${result.unexpected}/${result.errors}`,
  };
}

function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

export default async function inspectBench(ctx: BenchContext): Promise<void> {
  const loadRows: BenchRow[] = [];
  const budgetRows: BenchRow[] = [];

  ctx.progress('starting the upstream, the bare endpoint and a PGlite gateway');
  const upstream = await startUpstream();
  const bare = Fastify({ logger: false });
  bare.post('/x', async () => ({ ok: true }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/x`;
  let gateway: TestGateway | undefined;
  try {
    gateway = await startTestGateway('pglite');
    const { tenant } = gateway;
    await gateway.setPolicy(tenant.id, {
      trustedServers: ['files', 'echo'],
      allowedModes: ['production', 'simulation', 'shadow'],
    });
    await gateway.registerServer({ tenantId: tenant.id, serverId: 'echo', url: upstream.url });
    const inspectUrl = `${gateway.url}/api/v1/mcp/gateway/inspect`;
    const allowBody = inspectBody(tenant.agentId);
    const denyBody = inspectBody(tenant.agentId, { server: 'not-whitelisted' });

    // Bare endpoint and inspect allow, alternating.
    const bareRuns: Extract<LoadResult, { kind: 'throughput' }>[] = [];
    const allowRuns: Extract<LoadResult, { kind: 'throughput' }>[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      ctx.progress(`round ${round}: bare Fastify`);
      const b = await throughput(post(bareUrl, allowBody, 200));
      bareRuns.push(b);
      loadRows.push(loadRow(`bare Fastify POST (round ${round})`, CONNECTIONS, b));
      ctx.progress(`round ${round}: inspect allow (simulation)`);
      const a = await throughput(post(inspectUrl, allowBody, 200, tenant.key));
      allowRuns.push(a);
      loadRows.push(loadRow(`inspect allow, simulation (round ${round})`, CONNECTIONS, a));
    }
    const ratio = mean(allowRuns.map((r) => r.rps)) / mean(bareRuns.map((r) => r.rps));
    const allowP99 = mean(allowRuns.map((r) => r.p99));
    budgetRows.push({
      budget: 'allow throughput ≥ 60 % of bare',
      measured: `${(ratio * 100).toFixed(1)} %`,
      result: verdict(ratio >= BUDGET.allowThroughputRatio),
    });
    budgetRows.push({
      budget: `allow p99 ≤ ${BUDGET.allowP99Ms} ms at ${CONNECTIONS} connections`,
      measured: `${ms(allowP99)} ms`,
      result: verdict(allowP99 <= BUDGET.allowP99Ms),
    });

    ctx.progress('inspect deny, PGlite');
    const denyPglite = await throughput(post(inspectUrl, denyBody, 403, tenant.key));
    loadRows.push(loadRow('inspect deny, durable audit, PGlite', CONNECTIONS, denyPglite));
    budgetRows.push({
      budget: `deny p99 ≤ ${BUDGET.denyP99Ms} ms (PGlite, ${CONNECTIONS} connections)`,
      measured: `${ms(denyPglite.p99)} ms`,
      result: verdict(denyPglite.p99 <= BUDGET.denyP99Ms),
    });
    ctx.progress('inspect deny, PGlite, 8 connections');
    const denyPglite8 = await throughput(post(inspectUrl, denyBody, 403, tenant.key), 8);
    loadRows.push(loadRow('inspect deny, durable audit, PGlite', 8, denyPglite8));

    ctx.progress('production forward vs direct, sequential');
    const forwardBody = inspectBody(tenant.agentId, { server: 'echo', mode: 'production' });
    const direct: LoadRequest = {
      url: upstream.url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify(forwardBody.request),
      expectStatus: 200,
    };
    const sequential = await runLoad({
      kind: 'sequential',
      targets: [direct, post(inspectUrl, forwardBody, 200, tenant.key)],
      warmup: SEQUENTIAL_WARMUP,
      count: SEQUENTIAL_CALLS,
    });
    if (sequential.kind !== 'sequential') throw new Error('unexpected load result');
    const [directResult, forwardResult] = sequential.targets as [LatencySummary, LatencySummary];
    const overhead = forwardResult.p50 - directResult.p50;
    const forwardRow = (label: string, r: LatencySummary): BenchRow => ({
      path: label,
      calls: r.requests,
      'p50 ms': ms(r.p50),
      'p90 ms': ms(r.p90),
      'p99 ms': ms(r.p99),
      unexpected: r.unexpected,
    });
    budgetRows.push({
      budget: `forward overhead ≤ ${BUDGET.forwardOverheadP50Ms} ms at p50`,
      measured: `${ms(overhead)} ms`,
      result: verdict(overhead <= BUDGET.forwardOverheadP50Ms),
    });
    await gateway.close();
    gateway = undefined;

    if (postgresUrl) {
      ctx.progress('inspect deny, PostgreSQL');
      gateway = await startTestGateway('postgres');
      await gateway.setPolicy(gateway.tenant.id, { trustedServers: ['files'] });
      const pgUrl = `${gateway.url}/api/v1/mcp/gateway/inspect`;
      const pgDeny = inspectBody(gateway.tenant.agentId, { server: 'not-whitelisted' });
      const denyPg = await throughput(post(pgUrl, pgDeny, 403, gateway.tenant.key));
      loadRows.push(loadRow('inspect deny, durable audit, PostgreSQL', CONNECTIONS, denyPg));
      budgetRows.push({
        budget: `deny p99 ≤ ${BUDGET.denyP99Ms} ms (PostgreSQL, ${CONNECTIONS} connections)`,
        measured: `${ms(denyPg.p99)} ms`,
        result: verdict(denyPg.p99 <= BUDGET.denyP99Ms),
      });
      const denyPg8 = await throughput(post(pgUrl, pgDeny, 403, gateway.tenant.key), 8);
      loadRows.push(loadRow('inspect deny, durable audit, PostgreSQL', 8, denyPg8));
    } else {
      ctx.progress('DATABASE_URL is not set: the PostgreSQL deny row is skipped');
      budgetRows.push({
        budget: `deny p99 ≤ ${BUDGET.denyP99Ms} ms (PostgreSQL)`,
        measured: 'skipped (DATABASE_URL not set)',
        result: '—',
      });
    }

    ctx.report(
      `Inspect under load (autocannon in a child process, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s)`,
      loadRows,
    );
    ctx.report(
      `Production forward vs direct upstream call (sequential, interleaved, ${SEQUENTIAL_CALLS} calls each)`,
      [
        forwardRow('direct to upstream', directResult),
        forwardRow('inspect → forward', forwardResult),
      ],
    );
    ctx.report('Budgets (DESIGN.md §10)', budgetRows);
  } finally {
    await gateway?.close();
    await bare.close();
    upstream.child.kill();
  }
}
