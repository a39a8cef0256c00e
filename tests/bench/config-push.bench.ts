// Config push at scale (docs/config-push.md): one tenant with 1 000 agents, 100 NPL policy
// versions and 50 MCP servers in a fresh database schema, then
//   - buildConfigSnapshot (control plane), the serialized snapshot's size, compileSnapshot (data
//     plane), each the median of 5;
//   - push latency: a gateway-policy change committed through the service, published with
//     `publisher.publishNow()`, until a remote data plane serves it (its store swapped to a
//     snapshot whose policy blocks the toggled tool), 30 times.
// The control plane runs in this process (role `control-plane`, listening on 127.0.0.1:0); the
// data plane runs in a child process exactly as `agent-gateway data-plane` starts it
// (startDataPlane: the config stream client over real HTTP, its own event loop), registered with
// the function `data-plane register` uses. It reports each applied snapshot over IPC with a
// wall-clock timestamp (same machine, same clock). Remote data planes need PostgreSQL
// (DATA_PLANE_REQUIRES_POSTGRES): without DATABASE_URL the first part runs on PGlite and the
// push part is skipped.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../control-plane/services/mcp-servers.js';
import { publishPolicyVersion } from '../../control-plane/services/npl-policies.js';
import { createTenant } from '../../control-plane/services/tenants.js';
import { buildConfigSnapshot } from '../../control-plane/snapshot/build-snapshot.js';
import { registerDataPlane } from '../../control-plane/stream/credentials.js';
import { compileSnapshot } from '../../data-plane/store/compiled-snapshot.js';
import { createReadiness } from '../../http-edge/health.js';
import { buildGatewayRuntime } from '../../runtime/gateway-runtime.js';
import { createTestDatabase, postgresUrl } from '../support/databases.js';
import { latencyRow } from './measure.js';
import type { BenchContext } from './run.js';

const AGENTS = 1_000;
const POLICY_VERSIONS = 100;
const SERVERS = 50;
const ROUNDS = 5;
const PUSHES = 30;
const WARMUP_PUSHES = 3;
const TOGGLED_TOOL = 'bench_blocked_tool';

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const ms = (value: number) => value.toFixed(1);

function policySource(i: number): string {
  return `policyName: bench-policy-${i % 10}
version: 1.0.${Math.floor(i / 10)}
targetAgents: ['*']
rules:
  - ruleId: block_delete_${i}
    action: BLOCK
    condition: "tool.name == 'delete_${i}'"
    alertSeverity: MEDIUM
  - ruleId: hold_large_${i}
    action: REQUIRE_HUMAN
    condition: "tool.name == 'transfer' && args.amount > ${1000 + i}"
    alertSeverity: MEDIUM
`;
}

interface AppliedMessage {
  readonly version: number;
  readonly blocked: boolean;
  readonly at: number;
}

// The child: a data plane started as the CLI starts it, plus an IPC report of each swap.
const CHILD_SCRIPT = `
const { loadConfig } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../runtime/config.ts')).href)});
const { startDataPlane } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../runtime/start-data-plane.ts')).href)});
const { default: pino } = await import('pino');
const dp = await startDataPlane(loadConfig(process.env), {
  logger: pino({ level: 'warn' }, pino.destination(2)),
  controlPlaneUrl: process.env.BENCH_CONTROL_PLANE,
  credential: process.env.BENCH_CREDENTIAL,
  name: process.env.BENCH_NAME,
});
const tenantId = process.env.BENCH_TENANT_ID;
dp.runtime.store.onApply((snapshot) => {
  const at = performance.timeOrigin + performance.now();
  const blocked = snapshot.tenants.get(tenantId)?.policy.isToolBlocked(${JSON.stringify(TOGGLED_TOOL)}) ?? false;
  process.send({ version: snapshot.version, blocked, at });
});
process.on('message', async (message) => {
  if (message === 'stop') {
    await dp.close();
    process.exit(0);
  }
});
process.send('started');
`;

export default async function configPush(ctx: BenchContext): Promise<void> {
  const kind = postgresUrl ? 'postgres' : 'pglite';
  const database = await createTestDatabase(kind);
  const { db } = database;
  let child: ChildProcess | undefined;
  let dataDir: string | undefined;
  try {
    ctx.progress(
      `seeding ${kind}: ${AGENTS} agents, ${POLICY_VERSIONS} policies, ${SERVERS} servers`,
    );
    const seedStarted = performance.now();
    const tenant = await createTenant(db, { name: `bench-${randomBytes(3).toString('hex')}` });
    await db.prisma.agent.createMany({
      data: Array.from({ length: AGENTS }, (_, i) => {
        const id = randomUUID();
        return {
          id,
          tenantId: tenant.id,
          name: `agent-${i}`,
          allowedTools: i % 2 === 0 ? ['*'] : ['read', 'write', `tool_${i}`],
          mcpAudiences: [],
          publicKey: `bench-key-${randomBytes(16).toString('hex')}`,
          did: `did:svc:${tenant.id}:agent:${id}`,
        };
      }),
    });
    for (let i = 0; i < SERVERS; i += 1) {
      await registerMcpServer(db, {
        tenantId: tenant.id,
        serverId: `server-${i}`,
        url: `http://127.0.0.1:${10_000 + i}/mcp`,
      });
    }
    for (let i = 0; i < POLICY_VERSIONS; i += 1) {
      await publishPolicyVersion(db, { tenantId: tenant.id, source: policySource(i) });
    }
    await updateGatewayPolicy(
      db,
      tenant.id,
      { trustedServers: Array.from({ length: SERVERS }, (_, i) => `server-${i}`) },
      'bench',
    );
    ctx.progress(`seeded in ${ms(performance.now() - seedStarted)} ms`);

    const buildMs: number[] = [];
    const compileMs: number[] = [];
    let bytes = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const started = performance.now();
      const snapshot = await buildConfigSnapshot(db, round + 1);
      buildMs.push(performance.now() - started);
      const json = JSON.stringify(snapshot);
      bytes = Buffer.byteLength(json);
      // The data plane compiles what it parsed from the stream, so parse here too.
      const parsed = JSON.parse(json);
      const compileStarted = performance.now();
      compileSnapshot(parsed);
      compileMs.push(performance.now() - compileStarted);
    }
    ctx.report(
      `snapshot of ${AGENTS} agents, ${POLICY_VERSIONS} policies, ${SERVERS} servers (${kind})`,
      [
        {
          measure: 'buildConfigSnapshot (control plane), median of 5',
          value: `${ms(median(buildMs))} ms`,
        },
        { measure: 'serialized snapshot (JSON)', value: `${bytes} B` },
        {
          measure: 'compileSnapshot (data plane), median of 5',
          value: `${ms(median(compileMs))} ms`,
        },
      ],
    );

    if (!postgresUrl || !database.schema) {
      ctx.progress(
        'DATABASE_URL is not set: push latency skipped (remote data planes need PostgreSQL)',
      );
      return;
    }

    const runtime = await buildGatewayRuntime({
      db,
      logger: pino({ level: 'silent' }),
      readiness: createReadiness(),
      role: 'control-plane',
      snapshotPollIntervalMs: 60_000,
      defaultMetrics: false,
    });
    try {
      await runtime.publisher.start();
      await runtime.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = runtime.app.server.address() as { port: number };
      const plane = await registerDataPlane(db, 'bench-dp');
      dataDir = await mkdtemp(join(tmpdir(), 'agw-bench-dp-'));
      const spawned = spawn(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', CHILD_SCRIPT],
        {
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          env: {
            ...process.env,
            DATABASE_URL: postgresUrl,
            AGENT_GATEWAY_DB_SCHEMA: database.schema,
            AGENT_GATEWAY_PORT: '0',
            AGENT_GATEWAY_DATA_DIR: dataDir,
            AGENT_GATEWAY_LOG_LEVEL: 'warn',
            BENCH_CONTROL_PLANE: `http://127.0.0.1:${port}`,
            BENCH_CREDENTIAL: plane.credential,
            BENCH_NAME: plane.name,
            BENCH_TENANT_ID: tenant.id,
          },
        },
      );
      child = spawned;
      let waiter: ((message: AppliedMessage) => void) | undefined;
      const firstApplied = new Promise<AppliedMessage>((resolve) => {
        waiter = resolve;
      });
      spawned.on('message', (message: AppliedMessage | 'started') => {
        if (message !== 'started') waiter?.(message);
      });
      spawned.on('exit', (code) => {
        if (code !== 0) ctx.progress(`data plane exited with ${code}`);
      });
      const first = await firstApplied;
      ctx.progress(`data plane serves version ${first.version}; pushing ${PUSHES} changes`);

      const endToEnd: number[] = [];
      const publishOnly: number[] = [];
      for (let i = 0; i < WARMUP_PUSHES + PUSHES; i += 1) {
        const blocked = i % 2 === 0;
        const enforced = new Promise<AppliedMessage>((resolve) => {
          waiter = (message) => {
            if (message.blocked === blocked) resolve(message);
          };
        });
        await updateGatewayPolicy(
          db,
          tenant.id,
          { blockedTools: blocked ? [TOGGLED_TOOL] : [] },
          'bench',
        );
        const committed = now();
        await runtime.publisher.publishNow();
        const published = now();
        const applied = await enforced;
        if (i >= WARMUP_PUSHES) {
          endToEnd.push(applied.at - committed);
          publishOnly.push(published - committed);
        }
        await sleep(20);
      }
      ctx.report(
        `push latency, committed change → enforced by a remote data plane (${PUSHES} pushes)`,
        [
          latencyRow('publishNow (build + serialize + write to the stream)', publishOnly),
          latencyRow('commit → data plane store swapped', endToEnd),
        ],
      );
    } finally {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child?.once('exit', resolve));
        child.send('stop');
        await Promise.race([exited, sleep(5_000)]);
        if (child.exitCode === null) child.kill();
      }
      await runtime.app.close();
      await runtime.stop();
    }
  } finally {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    await database.dispose();
  }
}
