// Spawn latency (issue 13): POST /api/v1/agents/spawn against a gateway configured as `npm start`
// runs it (logger at info to /dev/null, no access log), one spawn at a time from the load
// generator's own process, on PGlite and (with DATABASE_URL) PostgreSQL. Each spawn makes a key
// pair, takes a status-list index, signs a credential and commits agent, credential and OAuth
// client in one transaction, then publishes the snapshot before answering — so the number
// includes the snapshot rebuild of a tenant that grows by one agent and one client per spawn.
// Report only: the issue sets no budget.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { createLogger } from '../../cli/logger.js';
import { type DatabaseKindUnderTest, postgresUrl } from '../support/databases.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import type { LatencySummary } from './load.js';
import type { BenchContext, BenchRow } from './run.js';
import { runSequential } from './run-load.js';

const SPAWN_PATH = '/api/v1/agents/spawn';
const WARMUP = 10;
const SPAWNS = 200;

/** A gateway as `npm start` runs it, with the master key handed to its control plane. */
async function startGateway(kind: DatabaseKindUnderTest): Promise<TestGateway> {
  const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }));
  const gateway = await startTestGateway(kind, { logger });
  gateway.runtime.keyCustody.useMasterKey(randomBytes(32), 'bench');
  for (const serverId of ['files', 'mail']) {
    await gateway.registerServer({
      tenantId: gateway.tenant.id,
      serverId,
      url: 'http://127.0.0.1:9/',
    });
  }
  return gateway;
}

const ms = (value: number) => Number(value.toFixed(2));

async function measure(
  ctx: BenchContext,
  kind: DatabaseKindUnderTest,
  label: string,
): Promise<BenchRow> {
  ctx.progress(`starting a ${label} gateway (npm start logging)`);
  const gateway = await startGateway(kind);
  try {
    const managerKey = await gateway.addApiKey(gateway.tenant.id, ['agents:manage']);
    // One body for every spawn: the gateway makes each agent its own key, so none collide.
    const body = JSON.stringify({
      name: 'bench-agent',
      system_prompt: 'You research and summarize.',
      persona: { tone: 'terse', language: 'en' },
      allowed_tools: ['echo', 'search', 'read_file'],
      mcp_audiences: ['mcp://files', 'mcp://mail'],
      ttl_seconds: 3600,
    });
    ctx.progress(`${WARMUP} + ${SPAWNS} sequential spawns on ${label}`);
    const [latency] = (await runSequential(
      [
        {
          url: `${gateway.url}${SPAWN_PATH}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${managerKey}` },
          body,
          expectStatus: 201,
        },
      ],
      WARMUP,
      SPAWNS,
    )) as [LatencySummary];
    if (latency.unexpected > 0 || latency.errors > 0) {
      throw new Error(`spawn answered otherwise than 201: ${JSON.stringify(latency)}`);
    }
    const agents = await gateway.db.prisma.agent.count({ where: { tenantId: gateway.tenant.id } });
    return {
      database: label,
      spawns: latency.requests,
      'agents in tenant after': agents,
      'spawns/s': Number((1000 / latency.mean).toFixed(1)),
      'mean ms': ms(latency.mean),
      'p50 ms': ms(latency.p50),
      'p90 ms': ms(latency.p90),
      'p99 ms': ms(latency.p99),
      'max ms': ms(latency.max),
    };
  } finally {
    await gateway.close();
  }
}

export default async function spawnBench(ctx: BenchContext): Promise<void> {
  const rows = [await measure(ctx, 'pglite', 'PGlite')];
  if (postgresUrl) rows.push(await measure(ctx, 'postgres', 'PostgreSQL'));
  ctx.report(
    `Spawn latency over HTTP (POST ${SPAWN_PATH}; ${SPAWNS} sequential spawns after ${WARMUP}, one tenant; key pair, status-list index, signed credential, one transaction, snapshot published before the answer; report only)`,
    rows,
  );
}
