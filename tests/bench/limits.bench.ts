// Usage limits (issue 26; DESIGN.md §10 and §13): what a limit costs the call it matches.
//
// 1. Inspect allow (simulation) under a call-count limit against the same allow without limits,
//    on one gateway (one data plane, as `npm start` runs it): the same request, the tenant's
//    limits switched between runs, after a warm-up of both, in rounds A B, B A, A B so that
//    drift hits both. Budget: within 10 % of the throughput without limits, at 50 connections.
// 2. A budget check's cost, on PGlite and on PostgreSQL:
//    - round trips, counted on the database the limiter is given (every query it sends), for the
//      step's two shapes: reserve alone (no pinned rule reads `usage`) and view then reserve (one
//      does); budget: exactly one, and two;
//    - the same in time: inspect allow with no limit, under a budget, and under a budget with a
//      pinned rule reading `usage` (two tenants of one gateway), sequential and interleaved.

import pino from 'pino';
import { createLogger } from '../../cli/logger.js';
import { compileLimits } from '../../data-plane/limits/compiled-limits.js';
import { type LimitCall, UsageLimiter } from '../../data-plane/limits/usage-limiter.js';
import { usageLimitsRule } from '../../shared/limits/usage-limits.js';
import type { Database } from '../../storage/engine/database.js';
import {
  createTestDatabase,
  type DatabaseKindUnderTest,
  postgresUrl,
} from '../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';
import type { LoadRequest } from './load.js';
import { percentile } from './measure.js';
import type { BenchContext, BenchRow } from './run.js';
import { runSequential, runThroughput, sequentialRow, type ThroughputResult } from './run-load.js';

const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = 6;
const ROUNDS = 3;
const SEQUENTIAL_WARMUP = 300;
const SEQUENTIAL_CALLS = 1500;
const CHECKS = 1000;
const BUDGET = { callLimitThroughputRatio: 0.9 };

const LIMITS = usageLimitsRule.parse([
  {
    limitId: 'calls',
    per: 'AGENT',
    tools: ['search'],
    windowSeconds: 86_400,
    // Never reached during the run: every allow is decided locally, counts added in batches.
    maxCalls: 1_000_000_000,
    action: 'DENY',
  },
  {
    limitId: 'spend',
    per: 'AGENT',
    tools: ['pay'],
    windowSeconds: 86_400,
    sumArgument: 'amount',
    maxSum: 1e15,
    action: 'DENY',
  },
]);
const CALL_LIMIT = LIMITS[0] as (typeof LIMITS)[number];
const BUDGET_LIMIT = LIMITS[1] as (typeof LIMITS)[number];
/** A pinned rule that reads `usage`: every call under a limit then reads before it reserves. */
const WATCH_POLICY = {
  version: '1.0.0',
  policyName: 'spend-watch',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'watch',
      action: 'BLOCK',
      condition: "tool.name == 'pay' && usage.spend.sumAfter > 100000000000000",
      alertSeverity: 'CRITICAL',
    },
  ],
};

const ms = (value: number) => Number(value.toFixed(3));
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
const label = (kind: DatabaseKindUnderTest) => (kind === 'pglite' ? 'PGlite' : 'PostgreSQL');

function post(url: string, body: unknown, key: string): LoadRequest {
  return {
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
    expectStatus: 200,
  };
}

function loadRow(scenario: string, result: ThroughputResult): BenchRow {
  return {
    scenario,
    connections: CONNECTIONS,
    'req/s': Math.round(result.rps),
    'p50 ms': ms(result.p50),
    'p99 ms': ms(result.p99),
    'unexpected/errors': `${result.unexpected}/${result.errors}`,
  };
}

/** A gateway as `npm start` runs it (logger at info, no access log). */
function startGateway(kind: DatabaseKindUnderTest): Promise<TestGateway> {
  const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }));
  return startTestGateway(kind, { logger });
}

/** Throughput of the same allow without limits and under a call-count limit, alternating. */
async function callLimitRounds(
  ctx: BenchContext,
  kind: DatabaseKindUnderTest,
  loadRows: BenchRow[],
): Promise<BenchRow> {
  const gateway = await startGateway(kind);
  try {
    const { tenant } = gateway;
    await gateway.setPolicy(tenant.id, { trustedServers: ['files'] });
    const request = post(
      `${gateway.url}/api/v1/mcp/gateway/inspect`,
      inspectBody(tenant.agentId, { tool: 'search' }),
      tenant.key,
    );
    const run = async (limited: boolean, durationSeconds: number) => {
      await gateway.setPolicy(tenant.id, { limits: limited ? [CALL_LIMIT] : [] });
      return runThroughput({
        request,
        connections: CONNECTIONS,
        warmupSeconds: WARMUP_SECONDS,
        durationSeconds,
      });
    };
    // Both paths compiled before anything is measured.
    ctx.progress(`${label(kind)}: warming both paths up`);
    await run(false, 1);
    await run(true, 1);
    const without: ThroughputResult[] = [];
    const under: ThroughputResult[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // A B, B A, A B: a drift of the machine weighs on both alike.
      for (const limited of round % 2 === 1 ? [false, true] : [true, false]) {
        ctx.progress(
          `${label(kind)} round ${round}: allow ${limited ? 'under a call-count limit' : 'without limits'}`,
        );
        const result = await run(limited, DURATION_SECONDS);
        (limited ? under : without).push(result);
        loadRows.push(
          loadRow(
            `${label(kind)}: allow ${limited ? 'under a call-count limit' : 'without limits'} (round ${round})`,
            result,
          ),
        );
      }
    }
    const [counted] = await gateway.db.query<{ calls: string }>(
      `select calls::text as calls from usage_counters where "limitId" = 'calls'`,
    );
    ctx.progress(`${label(kind)}: ${counted?.calls ?? 0} calls counted under the limit`);
    const ratio = mean(under.map((r) => r.rps)) / mean(without.map((r) => r.rps));
    return {
      budget: `allow under a call-count limit ≥ ${BUDGET.callLimitThroughputRatio * 100} % of the same allow without limits (${label(kind)}, ${CONNECTIONS} connections)`,
      measured: `${(ratio * 100).toFixed(1)} % (${Math.round(mean(under.map((r) => r.rps)))} vs ${Math.round(mean(without.map((r) => r.rps)))} req/s; p99 ${ms(mean(under.map((r) => r.p99)))} vs ${ms(mean(without.map((r) => r.p99)))} ms)`,
      result: verdict(ratio >= BUDGET.callLimitThroughputRatio),
    };
  } finally {
    await gateway.close();
  }
}

/** Every query the limiter sends, counted: the round trips of a check. */
function countingDatabase(db: Database): { db: Database; count: () => number } {
  let queries = 0;
  const counting: Database = {
    ...db,
    query<Row>(text: string, params?: readonly unknown[]) {
      queries++;
      return db.query<Row>(text, params);
    },
  };
  return { db: counting, count: () => queries };
}

/** Round trips and time of a budget check in the limiter, without and with a usage read. */
async function budgetRoundTrips(
  ctx: BenchContext,
  kind: DatabaseKindUnderTest,
  rows: BenchRow[],
  budgetRows: BenchRow[],
): Promise<void> {
  const test = await createTestDatabase(kind);
  const { db, count } = countingDatabase(test.db);
  try {
    const [budget, calls] = compileLimits([BUDGET_LIMIT, CALL_LIMIT]).all;
    const payment: LimitCall = {
      tenantId: 't',
      agentId: 'a',
      toolName: 'pay',
      args: { amount: 1 },
    };
    const search: LimitCall = { tenantId: 't', agentId: 'a', toolName: 'search', args: {} };
    const shapes = [
      {
        name: 'budget: reserve (no pinned rule reads usage)',
        expected: 1,
        run: (limiter: UsageLimiter) => limiter.reserve(payment, [budget!]),
      },
      {
        name: 'budget: view, then reserve (a pinned rule reads usage)',
        expected: 2,
        run: async (limiter: UsageLimiter) => {
          await limiter.view(payment, [budget!]);
          return limiter.reserve(payment, [budget!]);
        },
      },
      {
        name: 'call-count limit: reserve (counts added in batches)',
        expected: null,
        run: (limiter: UsageLimiter) => limiter.reserve(search, [calls!]),
      },
    ];
    for (const shape of shapes) {
      ctx.progress(`${label(kind)}: ${shape.name}`);
      const limiter = new UsageLimiter({ db });
      for (let i = 0; i < 50; i++) await shape.run(limiter);
      const before = count();
      const times: number[] = [];
      for (let i = 0; i < CHECKS; i++) {
        const started = performance.now();
        const check = await shape.run(limiter);
        times.push(performance.now() - started);
        if (!check.ok) throw new Error(`${shape.name}: refused (${check.reason})`);
      }
      // A call-count limit's batches are added after the answer: they land before counting.
      await limiter.close();
      const perCheck = (count() - before) / CHECKS;
      rows.push({
        database: label(kind),
        check: shape.name,
        checks: CHECKS,
        'queries per check': Number(perCheck.toFixed(3)),
        'p50 ms': ms(percentile(times, 50)),
        'p99 ms': ms(percentile(times, 99)),
      });
      if (shape.expected !== null) {
        budgetRows.push({
          budget: `${shape.name}: ${shape.expected} round trip${shape.expected > 1 ? 's' : ''} (${label(kind)})`,
          measured: `${perCheck} per check`,
          result: verdict(perCheck === shape.expected),
        });
      }
    }
  } finally {
    await test.dispose();
  }
}

/** Inspect allow without limits, under a budget, and under a budget that a pinned rule reads. */
async function budgetLatency(
  ctx: BenchContext,
  kind: DatabaseKindUnderTest,
  rows: BenchRow[],
): Promise<void> {
  const gateway = await startGateway(kind);
  try {
    const plain = gateway.tenant;
    const watched = await gateway.addTenant();
    for (const tenant of [plain, watched]) {
      await gateway.setPolicy(tenant.id, { trustedServers: ['files'], limits: [BUDGET_LIMIT] });
    }
    const uri = await gateway.publishPolicy(watched.id, WATCH_POLICY);
    await gateway.setPolicy(watched.id, { pinnedPolicies: [uri] });
    const url = `${gateway.url}/api/v1/mcp/gateway/inspect`;
    const pay = { tool: 'pay', args: { amount: 1 } };
    ctx.progress(`${label(kind)}: inspect allow with and without a budget, sequential`);
    const [none, budget, read] = await runSequential(
      [
        post(url, inspectBody(plain.agentId, { tool: 'echo' }), plain.key),
        post(url, inspectBody(plain.agentId, pay), plain.key),
        post(url, inspectBody(watched.agentId, pay), watched.key),
      ],
      SEQUENTIAL_WARMUP,
      SEQUENTIAL_CALLS,
    );
    rows.push(sequentialRow(`${label(kind)}: allow, no limit`, none!));
    rows.push(sequentialRow(`${label(kind)}: allow under a budget`, budget!));
    rows.push(
      sequentialRow(`${label(kind)}: allow under a budget, a pinned rule reads usage`, read!),
    );
  } finally {
    await gateway.close();
  }
}

export default async function limitsBench(ctx: BenchContext): Promise<void> {
  const kinds: DatabaseKindUnderTest[] = postgresUrl ? ['pglite', 'postgres'] : ['pglite'];
  if (!postgresUrl) ctx.progress('DATABASE_URL is not set: PostgreSQL is skipped');
  const loadRows: BenchRow[] = [];
  const checkRows: BenchRow[] = [];
  const latencyRows: BenchRow[] = [];
  const budgetRows: BenchRow[] = [];
  for (const kind of kinds) budgetRows.push(await callLimitRounds(ctx, kind, loadRows));
  for (const kind of kinds) await budgetRoundTrips(ctx, kind, checkRows, budgetRows);
  for (const kind of kinds) await budgetLatency(ctx, kind, latencyRows);
  ctx.report(
    `Inspect allow (simulation), one gateway, the same request with and without a call-count limit (autocannon in a child process, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s, ${ROUNDS} alternating rounds)`,
    loadRows,
  );
  ctx.report(
    `A limit check in the limiter (${CHECKS} sequential checks after 50; every query counted)`,
    checkRows,
  );
  ctx.report(
    `Inspect allow, sequential, interleaved (${SEQUENTIAL_CALLS} calls each after ${SEQUENTIAL_WARMUP})`,
    latencyRows,
  );
  ctx.report('Budgets (DESIGN.md §10)', budgetRows);
}
