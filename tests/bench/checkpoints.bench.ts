// The anchored audit trail's costs (docs/audit.md, "Checkpoints"; budgets in DESIGN.md §10 and
// the issue): appends must not notice checkpoints, and proofs must come from stored nodes.
//
// 1. The deny path and audit appends with checkpoints on and off, in one run: two gateways as
//    `npm start` runs them (PGlite, logger at info), one cutting checkpoints with the default
//    rules (every 1 000 entries or 60 s), one not; rounds alternate so machine drift hits both.
//    Budget: with checkpoints on, the deny p99 and the append throughput within 10 % of off.
// 2. Proofs in a tenant of 1 000 000 entries, over HTTP from the gateway. Set-up (not measured
//    against a budget, but reported): the entries are inserted with SQL (valid hashes of a chain
//    of their own, no seals: the tree needs only the hashes), then the tenant's tree is grown by
//    the checkpointer's own cut (tiles: rows at levels 4, 8, 12…). Budget: an inclusion proof answered in under 10 ms (p99).
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createLogger } from '../../cli/logger.js';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';
import type { BenchContext, BenchRow } from './run.js';
import { runSequential, runThroughput, sequentialRow } from './run-load.js';

const ROUNDS = 3;
const DENY_CONNECTIONS = 8;
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = 5;
const APPEND_WRITERS = 64;
const APPEND_MS = 3000;
const BIG_TENANT = 1_000_000;
const INSERT_CHUNK = 100_000;
const BUDGET = { denyP99Ratio: 1.1, appendThroughputRatio: 0.9, inclusionP99Ms: 10 };

const ms = (value: number) => Number(value.toFixed(3));
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');

function startGateway(checkpoints: boolean): Promise<TestGateway> {
  const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }));
  return startTestGateway('pglite', checkpoints ? { logger, auditCheckpoints: {} } : { logger });
}

async function appendsPerSecond(gw: TestGateway): Promise<number> {
  const deadline = performance.now() + APPEND_MS;
  const started = performance.now();
  let appended = 0;
  await Promise.all(
    Array.from({ length: APPEND_WRITERS }, async (_, writer) => {
      while (performance.now() < deadline) {
        await gw.runtime.audit.append({
          tenantId: gw.tenant.id,
          action: 'bench.append',
          resourceType: 'bench',
          resourceId: `w${writer}`,
        });
        appended++;
      }
    }),
  );
  return (appended / (performance.now() - started)) * 1000;
}

export default async function checkpointsBench(ctx: BenchContext): Promise<void> {
  const rows: BenchRow[] = [];
  const budgets: BenchRow[] = [];
  const gateways = { off: await startGateway(false), on: await startGateway(true) };
  const samples = {
    off: { p99: [] as number[], rps: [] as number[], appends: [] as number[] },
    on: { p99: [] as number[], rps: [] as number[], appends: [] as number[] },
  };
  try {
    // Round 0 warms both gateways up (JIT, connection pools) and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const mode of ['off', 'on'] as const) {
        const gw = gateways[mode];
        ctx.progress(`round ${round}: checkpoints ${mode}, deny load`);
        const result = await runThroughput({
          request: {
            url: `${gw.url}/api/v1/mcp/gateway/inspect`,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${gw.tenant.key}`,
            },
            body: JSON.stringify(inspectBody(gw.tenant.agentId, { server: 'not-whitelisted' })),
            expectStatus: 403,
          },
          connections: DENY_CONNECTIONS,
          warmupSeconds: WARMUP_SECONDS,
          durationSeconds: DURATION_SECONDS,
        });
        ctx.progress(`round ${round}: checkpoints ${mode}, ${APPEND_WRITERS} appenders`);
        const appends = await appendsPerSecond(gw);
        if (round === 0) continue;
        samples[mode].p99.push(result.p99);
        samples[mode].rps.push(result.rps);
        samples[mode].appends.push(appends);
        rows.push({
          round,
          checkpoints: mode,
          'deny req/s': Math.round(result.rps),
          'deny p50 ms': ms(result.p50),
          'deny p99 ms': ms(result.p99),
          'appends/s': Math.round(appends),
        });
      }
    }
    const cut = await gateways.on.db.query<{ n: number }>(
      'select count(*)::int as n from audit_checkpoints where "tenantId" = $1',
      [gateways.on.tenant.id],
    );
    ctx.report(
      `Deny path (${DENY_CONNECTIONS} connections) and audit appends (${APPEND_WRITERS} writers), checkpoints off and on (${cut[0]?.n ?? 0} checkpoints cut during the run)`,
      rows,
    );
    const p99Ratio = mean(samples.on.p99) / mean(samples.off.p99);
    const appendRatio = mean(samples.on.appends) / mean(samples.off.appends);
    budgets.push(
      {
        budget: `deny p99 with checkpoints ≤ ${BUDGET.denyP99Ratio}× without`,
        measured: `${p99Ratio.toFixed(2)}× (${ms(mean(samples.on.p99))} vs ${ms(mean(samples.off.p99))} ms)`,
        result: verdict(p99Ratio <= BUDGET.denyP99Ratio),
      },
      {
        budget: `append throughput with checkpoints ≥ ${BUDGET.appendThroughputRatio}× without`,
        measured: `${appendRatio.toFixed(2)}× (${Math.round(mean(samples.on.appends))} vs ${Math.round(mean(samples.off.appends))} appends/s)`,
        result: verdict(appendRatio >= BUDGET.appendThroughputRatio),
      },
    );
  } finally {
    await gateways.off.close();
  }

  // 2. A tenant of a million entries on the gateway that cuts checkpoints.
  const gw = gateways.on;
  try {
    const tenant = await gw.addTenant('million');
    const auditor = await gw.addApiKey(tenant.id, ['audit:read']);
    const setup: BenchRow[] = [];
    let started = performance.now();
    for (let from = 1; from <= BIG_TENANT; from += INSERT_CHUNK) {
      const to = Math.min(BIG_TENANT, from + INSERT_CHUNK - 1);
      ctx.progress(`inserting entries ${from}..${to}`);
      await gw.db.query(
        `insert into audit_entries
           (id, "tenantId", seq, action, "resourceType", "resourceId", metadata, after, "createdAt", hash, "prevHash")
         select 'bench-' || i, $1, i, 'bench.entry', 'bench', 'r', '{}'::jsonb, 'seal-sha256:bench',
           now(), encode(sha256(('e' || i)::bytea), 'hex'),
           case when i = 1 then repeat('0', 64) else encode(sha256(('e' || (i - 1))::bytea), 'hex') end
         from generate_series($2::bigint, $3::bigint) as i`,
        [tenant.id, from, to],
      );
    }
    await gw.db.query(
      `insert into audit_chain_heads ("tenantId", seq, hash, "lastCreatedAt")
       values ($1, $2, encode(sha256(('e' || $3)::bytea), 'hex'), now())
       on conflict ("tenantId") do update set seq = excluded.seq, hash = excluded.hash`,
      [tenant.id, BIG_TENANT, String(BIG_TENANT)],
    );
    setup.push({
      step: `insert ${BIG_TENANT} entries (SQL)`,
      seconds: ms((performance.now() - started) / 1000),
      detail: 'valid chain hashes, no seals: the tree reads only the hashes',
    });
    ctx.progress('growing the tree over 1 000 000 entries (the checkpointer cut)');
    started = performance.now();
    const checkpoint = await gw.runtime.auditCheckpoints?.cut(tenant.id);
    const growSeconds = (performance.now() - started) / 1000;
    if (checkpoint?.treeSize !== BIG_TENANT) throw new Error(`cut ${checkpoint?.treeSize} entries`);
    setup.push({
      step: 'grow the tree and sign (one cut from nothing)',
      seconds: ms(growSeconds),
      detail: `${Math.round(BIG_TENANT / growSeconds)} entries/s`,
    });
    const nodes = await gw.db.query<{ n: number }>(
      'select count(*)::int as n from audit_tree_nodes where "tenantId" = $1',
      [tenant.id],
    );
    setup.push({
      step: 'stored tree rows (tiles at levels 4, 8, 12…)',
      seconds: '',
      detail: String(nodes[0]?.n ?? 0),
    });
    ctx.report('Set-up: a tenant of 1 000 000 entries', setup);

    const headers = { authorization: `Bearer ${auditor}` };
    const positions = [1, 2, 499_999, 777_777, BIG_TENANT];
    const targets = [
      ...positions.map((seq) => ({
        url: `${gw.url}/api/v1/audit/proof/inclusion?entry_id=bench-${seq}&tree_size=${BIG_TENANT}`,
        method: 'GET' as const,
        headers,
        expectStatus: 200,
      })),
      {
        url: `${gw.url}/api/v1/audit/proof/consistency?first=123457&second=${BIG_TENANT}`,
        method: 'GET' as const,
        headers,
        expectStatus: 200,
      },
    ];
    ctx.progress('proofs over HTTP, one at a time');
    const summaries = await runSequential(targets, 200, 1000);
    const names = [
      ...positions.map((seq) => `inclusion proof of entry ${seq} in 1 000 000`),
      'consistency proof 123 457 → 1 000 000',
    ];
    ctx.report(
      'Proofs from stored nodes, tenant of 1 000 000 entries (HTTP, sequential)',
      summaries.map((summary, i) => sequentialRow(names[i] as string, summary)),
    );
    const worst = Math.max(...summaries.slice(0, positions.length).map((s) => s.p99));
    budgets.push({
      budget: `inclusion proof in a tenant of 1 000 000 entries < ${BUDGET.inclusionP99Ms} ms (p99)`,
      measured: `${ms(worst)} ms (worst p99 of ${positions.length} positions)`,
      result: verdict(worst < BUDGET.inclusionP99Ms),
    });
  } finally {
    await gw.close();
  }
  ctx.report('Budgets', budgets);
}
