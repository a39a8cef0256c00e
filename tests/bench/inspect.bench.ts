import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify from 'fastify';
import pino from 'pino';
import { createLogger } from '../../cli/logger.js';
import { type DatabaseKindUnderTest, postgresUrl } from '../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';
import { startEchoUpstream } from './echo-upstream.js';
import type { LatencySummary, LoadRequest, LoadResult } from './load.js';
import type { BenchContext, BenchRow } from './run.js';
import { runLoad, runThroughput, type ThroughputResult } from './run-load.js';

const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = 6;
/** Bare and allow alternate for this many rounds, so that machine drift hits both. */
const ROUNDS = 2;
const SEQUENTIAL_WARMUP = 500;
const SEQUENTIAL_CALLS = 2_000;

const BUDGET = {
  allowThroughputRatio: 0.6,
  /** Allow p99 at most this many times the bare endpoint's p99 (50 connections). */
  allowP99Ratio: 2,
  /** Deny p99 at most this many times the bare endpoint's p99 (8 connections). */
  denyP99Ratio: 5,
  eventLoopDelayMs: 2,
  forwardOverheadP50Ms: 0.5,
};
const DENY_CONNECTIONS = 8;

function throughput(request: LoadRequest, connections = CONNECTIONS): Promise<ThroughputResult> {
  return runThroughput({
    request,
    connections,
    warmupSeconds: WARMUP_SECONDS,
    durationSeconds: DURATION_SECONDS,
  });
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

function denyBudget(database: string, denyP99: number, bareP99: number): BenchRow {
  const ratio = denyP99 / bareP99;
  return {
    budget: `deny p99 ≤ ${BUDGET.denyP99Ratio}× bare p99 (${database}, ${DENY_CONNECTIONS} connections)`,
    measured: `${ratio.toFixed(2)}× (${ms(denyP99)} vs ${ms(bareP99)} ms)`,
    result: verdict(ratio <= BUDGET.denyP99Ratio),
  };
}

function delayRow(
  scenario: string,
  connections: number,
  sample: { p99Ms: number; maxMs: number },
): BenchRow {
  return {
    scenario,
    connections,
    'delay p99 ms': ms(sample.p99Ms),
    'delay max ms': ms(sample.maxMs),
  };
}

function delayBudget(database: string, sample: { p99Ms: number; maxMs: number }): BenchRow {
  return {
    budget: `event-loop delay p99 ≤ ${BUDGET.eventLoopDelayMs} ms under deny load (${database})`,
    measured: `${ms(sample.p99Ms)} ms (max ${ms(sample.maxMs)} ms)`,
    result: verdict(sample.p99Ms <= BUDGET.eventLoopDelayMs),
  };
}

function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** A gateway as `npm start` runs it (logger at info, no access log), or with a silent logger. */
function startGateway(kind: DatabaseKindUnderTest, logging: 'npm start' | 'silent') {
  const logger =
    logging === 'silent'
      ? pino({ level: 'silent' })
      : createLogger('info', pino.destination({ dest: '/dev/null', sync: false }));
  return startTestGateway(kind, { logger });
}

/** Runs `load` while sampling this process's event-loop delay (the gateways run here). */
async function withEventLoopDelay<T>(
  load: () => Promise<T>,
): Promise<{ result: T; p99Ms: number; maxMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  try {
    const result = await load();
    return {
      result,
      p99Ms: histogram.percentile(99) / 1e6,
      maxMs: histogram.max / 1e6,
    };
  } finally {
    histogram.disable();
  }
}

export default async function inspectBench(ctx: BenchContext): Promise<void> {
  const loadRows: BenchRow[] = [];
  const budgetRows: BenchRow[] = [];
  const delayRows: BenchRow[] = [];

  ctx.progress('starting the upstream, the bare endpoint and two PGlite gateways');
  const upstream = await startEchoUpstream();
  const bare = Fastify({ logger: false });
  bare.post('/x', async () => ({ ok: true }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/x`;
  const gateways: TestGateway[] = [];
  try {
    const gateway = await startGateway('pglite', 'npm start');
    gateways.push(gateway);
    const silent = await startGateway('pglite', 'silent');
    gateways.push(silent);
    for (const g of gateways) {
      await g.setPolicy(g.tenant.id, {
        trustedServers: ['files', 'echo'],
        allowedModes: ['production', 'simulation', 'shadow'],
      });
    }
    const { tenant } = gateway;
    await gateway.registerServer({ tenantId: tenant.id, serverId: 'echo', url: upstream.url });
    const inspectUrl = `${gateway.url}/api/v1/mcp/gateway/inspect`;
    const silentUrl = `${silent.url}/api/v1/mcp/gateway/inspect`;
    const allowBody = inspectBody(tenant.agentId);
    const silentAllowBody = inspectBody(silent.tenant.agentId);
    const denyBody = inspectBody(tenant.agentId, { server: 'not-whitelisted' });

    // Bare endpoint and inspect allow (npm start logging, then silent), alternating.
    const bareRuns: Extract<LoadResult, { kind: 'throughput' }>[] = [];
    const allowRuns: Extract<LoadResult, { kind: 'throughput' }>[] = [];
    const silentRuns: Extract<LoadResult, { kind: 'throughput' }>[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      ctx.progress(`round ${round}: bare Fastify`);
      const b = await throughput(post(bareUrl, allowBody, 200));
      bareRuns.push(b);
      loadRows.push(loadRow(`bare Fastify POST (round ${round})`, CONNECTIONS, b));
      ctx.progress(`round ${round}: inspect allow (simulation), as npm start runs it`);
      const a = await throughput(post(inspectUrl, allowBody, 200, tenant.key));
      allowRuns.push(a);
      loadRows.push(loadRow(`inspect allow, npm start logging (round ${round})`, CONNECTIONS, a));
      ctx.progress(`round ${round}: inspect allow (simulation), silent logger`);
      const q = await throughput(post(silentUrl, silentAllowBody, 200, silent.tenant.key));
      silentRuns.push(q);
      loadRows.push(loadRow(`inspect allow, silent logger (round ${round})`, CONNECTIONS, q));
    }
    const bareRps = mean(bareRuns.map((r) => r.rps));
    const bareP99 = mean(bareRuns.map((r) => r.p99));
    const ratio = mean(allowRuns.map((r) => r.rps)) / bareRps;
    const silentRatio = mean(silentRuns.map((r) => r.rps)) / bareRps;
    const allowP99Ratio = mean(allowRuns.map((r) => r.p99)) / bareP99;
    budgetRows.push({
      budget: 'allow throughput ≥ 60 % of bare (npm start logging)',
      measured: `${(ratio * 100).toFixed(1)} % (silent logger: ${(silentRatio * 100).toFixed(1)} %)`,
      result: verdict(ratio >= BUDGET.allowThroughputRatio),
    });
    budgetRows.push({
      budget: `allow p99 ≤ ${BUDGET.allowP99Ratio}× bare p99 at ${CONNECTIONS} connections`,
      measured: `${allowP99Ratio.toFixed(2)}× (${ms(mean(allowRuns.map((r) => r.p99)))} vs ${ms(bareP99)} ms)`,
      result: verdict(allowP99Ratio <= BUDGET.allowP99Ratio),
    });

    ctx.progress(`bare Fastify, ${DENY_CONNECTIONS} connections`);
    const bare8 = await throughput(post(bareUrl, allowBody, 200), DENY_CONNECTIONS);
    loadRows.push(loadRow('bare Fastify POST', DENY_CONNECTIONS, bare8));
    ctx.progress(`inspect deny, PGlite, ${DENY_CONNECTIONS} connections`);
    const deny8 = await withEventLoopDelay(() =>
      throughput(post(inspectUrl, denyBody, 403, tenant.key), DENY_CONNECTIONS),
    );
    loadRows.push(loadRow('inspect deny, durable audit, PGlite', DENY_CONNECTIONS, deny8.result));
    delayRows.push(delayRow('inspect deny, PGlite', DENY_CONNECTIONS, deny8));
    budgetRows.push(denyBudget('PGlite', deny8.result.p99, bare8.p99));
    budgetRows.push(delayBudget('PGlite', deny8));
    ctx.progress('inspect deny, PGlite, 50 connections');
    const deny50 = await withEventLoopDelay(() =>
      throughput(post(inspectUrl, denyBody, 403, tenant.key)),
    );
    loadRows.push(loadRow('inspect deny, durable audit, PGlite', CONNECTIONS, deny50.result));
    delayRows.push(delayRow('inspect deny, PGlite', CONNECTIONS, deny50));
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
    for (const g of gateways.splice(0)) await g.close();

    if (postgresUrl) {
      ctx.progress('inspect deny, PostgreSQL');
      const pg = await startGateway('postgres', 'npm start');
      gateways.push(pg);
      await pg.setPolicy(pg.tenant.id, { trustedServers: ['files'] });
      const pgUrl = `${pg.url}/api/v1/mcp/gateway/inspect`;
      const pgDeny = inspectBody(pg.tenant.agentId, { server: 'not-whitelisted' });
      const denyPg8 = await withEventLoopDelay(() =>
        throughput(post(pgUrl, pgDeny, 403, pg.tenant.key), DENY_CONNECTIONS),
      );
      loadRows.push(
        loadRow('inspect deny, durable audit, PostgreSQL', DENY_CONNECTIONS, denyPg8.result),
      );
      delayRows.push(delayRow('inspect deny, PostgreSQL', DENY_CONNECTIONS, denyPg8));
      budgetRows.push(denyBudget('PostgreSQL', denyPg8.result.p99, bare8.p99));
      budgetRows.push(delayBudget('PostgreSQL', denyPg8));
      const denyPg = await throughput(post(pgUrl, pgDeny, 403, pg.tenant.key));
      loadRows.push(loadRow('inspect deny, durable audit, PostgreSQL', CONNECTIONS, denyPg));
    } else {
      ctx.progress('DATABASE_URL is not set: the PostgreSQL deny row is skipped');
      budgetRows.push({
        budget: 'deny p99 ≤ 5× bare p99 (PostgreSQL)',
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
    ctx.report('Event-loop delay of the gateway process while it serves denies', delayRows);
    ctx.report('Budgets (DESIGN.md §10)', budgetRows);
  } finally {
    for (const g of gateways) await g.close();
    await bare.close();
    upstream.child.kill();
  }
}
