// Kill switch propagation (DESIGN.md §10: every data plane refuses the agent within 50 ms, p99,
// of the kill answer, with 10 000 agents). One `agent-gateway control-plane` and three
// `agent-gateway data-plane` processes, started by the real CLI with their defaults (logging
// included), on PostgreSQL (DATABASE_URL; skipped without it: the planes need it to run apart).
// 10 000 agents are in the snapshot; 100 of them are killed one after another through the REST
// route of a data plane (round robin over the three). For each kill:
//   - the kill request's own latency (commit, local abort, fan-out with acknowledgements, durable
//     audit, answer);
//   - from the answer until each data plane refuses the agent: inspect sent to all three at
//     once, again and again back to back, until each answers 403 AGENT_REVOKED;
//   - the reference of the same run: the same three inspects just before the kill, agent live.
//     When every data plane confirmed before the answer, the first poll is refused, and the
//     measure is that round trip: compare it with the reference on a loaded machine.
// Also reported: the control plane's recorded slowest acknowledgement (propagation.slowestMs) and
// how many kills it confirmed on all three.
import { randomUUID } from 'node:crypto';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../control-plane/services/mcp-servers.js';
import { agentDid } from '../../shared/agentiam/dids.js';
import {
  type DataPlaneProcess,
  type SplitDeployment,
  startSplitDeployment,
} from '../control-plane/kill-propagation-support.js';
import { newAgentPublicKey } from '../support/agent-keys.js';
import { postgresUrl } from '../support/databases.js';
import { inspectBody } from '../support/gateway.js';
import { latencyRow, percentile } from './measure.js';
import type { BenchContext } from './run.js';

const AGENTS = 10_000;
const KILLS = 100;
const WARMUP_KILLS = 3;
const BUDGET_P99_MS = 50;

const ms = (value: number) => value.toFixed(1);

export default async function kill(ctx: BenchContext): Promise<void> {
  if (!postgresUrl) {
    ctx.progress(
      'DATABASE_URL is not set: kill propagation SKIPPED (a control plane and data planes in ' +
        'separate processes need PostgreSQL)',
    );
    return;
  }
  ctx.progress('starting 1 control plane and 3 data planes (agent-gateway CLI)');
  const d: SplitDeployment = await startSplitDeployment({ count: 3, direct: true });
  try {
    ctx.progress(`seeding ${AGENTS} agents`);
    const agents = Array.from({ length: AGENTS }, (_, i) => {
      const publicKey = newAgentPublicKey();
      return {
        id: randomUUID(),
        tenantId: d.tenantId,
        name: `bench-agent-${i}`,
        allowedTools: ['*'],
        mcpAudiences: [],
        publicKey,
        did: agentDid(publicKey),
      };
    });
    for (let i = 0; i < AGENTS; i += 1000) {
      await d.db.prisma.agent.createMany({ data: agents.slice(i, i + 1000) });
    }
    await registerMcpServer(d.db, {
      tenantId: d.tenantId,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { echo: { content: [] } },
    });
    // Bumps the tenant's configVersion: the control plane rebuilds with every agent.
    await updateGatewayPolicy(d.db, d.tenantId, { trustedServers: ['files'] }, 'bench');

    const inspect = async (plane: DataPlaneProcess, agentId: string): Promise<number> => {
      const response = await fetch(`${plane.url}/api/v1/mcp/gateway/inspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
        body: JSON.stringify(inspectBody(agentId)),
      });
      const body = (await response.json()) as { reasonCode?: string };
      if (response.status === 403 && body.reasonCode === 'AGENT_REVOKED') return 403;
      return response.status === 200 ? 200 : -response.status;
    };
    const last = agents.at(-1)?.id as string;
    for (const plane of d.dataPlanes) {
      const deadline = Date.now() + 120_000;
      while ((await inspect(plane, last)) !== 200) {
        if (Date.now() > deadline) throw new Error(`${plane.name} never served the agents`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    ctx.progress(`every data plane serves the ${AGENTS} agents; killing ${KILLS}`);

    const requestMs: number[] = [];
    const referenceMs: number[] = [];
    const everywhereMs: number[] = [];
    const perPlane = new Map<string, number[]>(d.dataPlanes.map((p) => [p.name, []]));
    const slowestAck: number[] = [];
    let confirmedEverywhere = 0;
    for (let i = 0; i < WARMUP_KILLS + KILLS; i += 1) {
      const agent = agents[i] as (typeof agents)[number];
      const receiver = d.dataPlanes[i % d.dataPlanes.length] as DataPlaneProcess;
      // The reference of the same run: the same three inspects while the agent is still live.
      const referenceStarted = performance.now();
      const live = await Promise.all(
        d.dataPlanes.map(async (plane) => {
          const status = await inspect(plane, agent.id);
          if (status !== 200) throw new Error(`${plane.name} answered ${status} before the kill`);
          return performance.now();
        }),
      );
      const reference = Math.max(...live) - referenceStarted;
      const started = performance.now();
      const response = await fetch(
        `${receiver.url}/api/v2/infrastructure/agents/${agent.publicKey}/kill`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
          body: JSON.stringify({ reason: 'bench' }),
        },
      );
      const answer = (await response.json()) as {
        propagation?: { confirmed: number; slowestMs: number | null };
      };
      const answered = performance.now();
      if (response.status !== 200) {
        throw new Error(`kill answered ${response.status}: ${JSON.stringify(answer)}`);
      }
      const refusedAt = await Promise.all(
        d.dataPlanes.map(async (plane) => {
          for (;;) {
            const status = await inspect(plane, agent.id);
            if (status === 403) return performance.now();
            if (status !== 200) throw new Error(`${plane.name} answered ${status}`);
            if (performance.now() - answered > 30_000) {
              throw new Error(`${plane.name} still serves a killed agent after 30 s`);
            }
          }
        }),
      );
      if (i < WARMUP_KILLS) continue;
      referenceMs.push(reference);
      requestMs.push(answered - started);
      everywhereMs.push(Math.max(...refusedAt) - answered);
      d.dataPlanes.forEach((plane, j) => {
        perPlane.get(plane.name)?.push((refusedAt[j] as number) - answered);
      });
      if (answer.propagation?.slowestMs != null) slowestAck.push(answer.propagation.slowestMs);
      if (answer.propagation?.confirmed === d.dataPlanes.length) confirmedEverywhere++;
    }
    const p99 = percentile(everywhereMs, 99);
    ctx.report(
      `kill → refused on every one of 3 data planes (${KILLS} kills, ${AGENTS} agents, PostgreSQL)`,
      [
        latencyRow('kill answer → refused on all 3 (budget p99 ≤ 50 ms)', everywhereMs),
        ...d.dataPlanes.map((plane) =>
          latencyRow(`kill answer → refused on ${plane.name}`, perPlane.get(plane.name) ?? []),
        ),
        latencyRow('reference: inspect answered by all 3, agent live (same polling)', referenceMs),
        latencyRow('kill request (REST, until the answer)', requestMs),
        latencyRow('propagation.slowestMs (fan-out → last acknowledgement)', slowestAck),
      ],
    );
    ctx.report('kill propagation budget', [
      {
        measure: 'answer → refused everywhere, p99',
        value: `${ms(p99)} ms`,
        budget: `≤ ${BUDGET_P99_MS} ms`,
        verdict: p99 <= BUDGET_P99_MS ? 'within budget' : 'OVER BUDGET',
      },
      {
        measure: 'kills confirmed by all 3 data planes before the answer',
        value: `${confirmedEverywhere} of ${KILLS}`,
        budget: '',
        verdict: '',
      },
    ]);
  } finally {
    await d.close();
  }
}
