// Usage limits across a fleet (issue 26, "What must hold"): one `agent-gateway control-plane` and
// three `agent-gateway data-plane` processes (the real CLI) on one PostgreSQL schema, each data
// plane reaching PostgreSQL through a TCP proxy of its own so that the test can cut one data
// plane's database. Limits are set the way an operator sets them (GraphQL updateGatewayPolicy on
// the control plane) and met through inspect, spread over the three data planes at once:
//
// - a budget is never exceeded: 300 concurrent calls of 100 under maxSum 10 000, exactly 100 pass;
// - a changed limit takes effect with the next snapshot and keeps the usage already counted;
// - a call-count limit: a client within it is never refused, the overshoot of a burst stays within
//   max(10 % of maxCalls, one call per data plane);
// - a data plane's counts survive its restart (its pending calls are added when it stops);
// - a data plane without its database refuses calls under a budget, serves calls under a
//   call-count limit up to its local allowance (added once the database is back), and serves
//   calls under no limit.
//
// One fleet for the file; every test has agents of its own. Skipped without DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../control-plane/services/mcp-servers.js';
import { newAgentPublicKey } from '../support/agent-keys.js';
import { killCliProcesses } from '../support/cli-process.js';
import { postgresUrl } from '../support/databases.js';
import { inspectBody } from '../support/gateway.js';
import { until } from '../support/until.js';
import {
  type DataPlaneProcess,
  type SplitDeployment,
  startSplitDeployment,
} from './kill-propagation-support.js';

if (!postgresUrl) {
  console.warn(
    'DATABASE_URL is not set: the usage-limits fleet test is SKIPPED (needs PostgreSQL).',
  );
}

const DAY = 86_400;

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

(postgresUrl ? describe.sequential : describe.skip)('usage limits across three data planes', () => {
  let d: SplitDeployment;
  let planes: DataPlaneProcess[];

  beforeAll(async () => {
    d = await startSplitDeployment({ count: 3, databaseProxy: true });
    planes = d.dataPlanes;
    await registerMcpServer(d.db, {
      tenantId: d.tenantId,
      serverId: 'tools',
      url: 'http://127.0.0.1:9/mcp',
    });
    await updateGatewayPolicy(d.db, d.tenantId, { trustedServers: ['tools'] }, 'test');
  }, 180_000);
  afterAll(async () => {
    await d?.close();
    await killCliProcesses();
  }, 60_000);

  /** A simulated tools/call of `tool` (simulated calls count like production ones). */
  const inspect = async (
    plane: DataPlaneProcess,
    agentId: string,
    tool: string,
    args: Record<string, unknown> = {},
  ): Promise<Answer> => {
    const response = await fetch(`${plane.url}/api/v1/mcp/gateway/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
      body: JSON.stringify(inspectBody(agentId, { server: 'tools', tool, args })),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  /** `count` calls at once, the i-th on data plane i mod 3. */
  const burst = (count: number, agentId: string, tool: string, args?: Record<string, unknown>) =>
    Promise.all(
      Array.from({ length: count }, (_, i) =>
        inspect(planes[i % planes.length] as DataPlaneProcess, agentId, tool, args),
      ),
    );
  const statuses = (answers: readonly Answer[]) => {
    const counts: Record<number, number> = {};
    for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
    return counts;
  };

  /** A snapshot version as a process's /metrics says. */
  const snapshotVersion = async (url: string): Promise<number> => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('agent_gateway_snapshot_version '));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };
  /** Resolves once every running data plane applied the control plane's current snapshot. */
  const synced = async (running = planes) => {
    const version = await snapshotVersion(d.controlPlane.url);
    for (const plane of running) {
      await until(
        () => snapshotVersion(plane.url),
        (applied) => applied >= version,
        `${plane.name} applies snapshot ${version}`,
      );
    }
  };

  /** The operator's change: the whole list of limits, through GraphQL on the control plane. */
  const setLimits = async (limits: Record<string, unknown>[]) => {
    const response = await fetch(`${d.controlPlane.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
      body: JSON.stringify({
        query: `mutation($input: GatewayPolicyInput!) {
          updateGatewayPolicy(input: $input) {
            __typename
            ... on GatewayPolicyValidationError { issues { field message } }
          }
        }`,
        variables: { input: { limits } },
      }),
    });
    const body = (await response.json()) as {
      data?: { updateGatewayPolicy: { __typename: string } };
    };
    expect(body.data?.updateGatewayPolicy.__typename, JSON.stringify(body)).toBe(
      'MutationUpdateGatewayPolicySuccess',
    );
    await synced();
  };

  /** A new agent allowed every tool, served by every data plane (probed with a tool no limit names). */
  const newAgent = async (name: string): Promise<string> => {
    const { id } = await createAgent(d.db, {
      tenantId: d.tenantId,
      name,
      role: 'agent',
      allowedTools: ['*'],
      publicKey: newAgentPublicKey(),
    });
    for (const plane of planes) {
      await until(
        () => inspect(plane, id, 'unlimited'),
        (answer) => answer.status === 200,
        `${plane.name} serves ${name}`,
      );
    }
    return id;
  };

  /** The agent's counter of `limitId` in its current window, as stored. */
  const counter = async (limitId: string, agentId: string) => {
    const rows = await d.db.query<{ calls: number; amount: string }>(
      `select calls::int as calls, amount::text as amount from usage_counters
        where "tenantId" = $1 and "limitId" = $2 and "agentId" = $3
          and "windowStart" = (floor(extract(epoch from now()) / "windowSeconds") * "windowSeconds")::bigint`,
      [d.tenantId, limitId, agentId],
    );
    const row = rows[0];
    return { calls: row?.calls ?? 0, amount: Number(row?.amount ?? 0) };
  };
  /** Resolves once the stored count of calls is `calls` (call counts are added in batches). */
  const countedCalls = (limitId: string, agentId: string, calls: number) =>
    until(
      () => counter(limitId, agentId),
      (row) => row.calls === calls,
      `${calls} calls of ${limitId} stored`,
    );

  const budget = (maxSum: number) => ({
    limitId: 'daily_spend',
    per: 'AGENT',
    tools: ['send_payment'],
    windowSeconds: DAY,
    sumArgument: 'amount',
    maxSum,
    action: 'DENY',
  });
  const callLimit = (limitId: string, tool: string, maxCalls: number) => ({
    limitId,
    per: 'AGENT',
    tools: [tool],
    windowSeconds: DAY,
    maxCalls,
    action: 'DENY',
  });

  let payer: string;

  it('a budget is never exceeded: 300 concurrent calls of 100 over three data planes under 10 000, exactly 100 allowed', async () => {
    payer = await newAgent('payer');
    await setLimits([budget(10_000)]);
    const answers = await burst(300, payer, 'send_payment', { amount: 100 });
    expect(statuses(answers)).toEqual({ 200: 100, 429: 200 });
    const allowedBy = planes.map(
      (_, index) =>
        answers.filter((answer, i) => i % planes.length === index && answer.status === 200).length,
    );
    console.info(`budget 10 000 over 3 data planes: allowed ${allowedBy.join(' + ')} = 100`);
    const refused = answers.find((answer) => answer.status === 429) as Answer;
    expect(refused.body).toMatchObject({
      decision: 'deny',
      reasonCode: 'BUDGET_EXCEEDED',
      limit: { limitId: 'daily_spend', per: 'AGENT', max: 10_000, requested: 100 },
    });
    expect(await counter('daily_spend', payer)).toEqual({ calls: 100, amount: 10_000 });
  }, 60_000);

  it('a changed limit takes effect with the next snapshot and keeps the usage already counted', async () => {
    await setLimits([budget(15_000)]);
    const raised = await burst(90, payer, 'send_payment', { amount: 100 });
    expect(statuses(raised)).toEqual({ 200: 50, 429: 40 });
    expect(await counter('daily_spend', payer)).toEqual({ calls: 150, amount: 15_000 });
    await setLimits([budget(12_000)]);
    for (const plane of planes) {
      expect((await inspect(plane, payer, 'send_payment', { amount: 1 })).body).toMatchObject({
        reasonCode: 'BUDGET_EXCEEDED',
        limit: { used: 15_000, max: 12_000 },
      });
    }
  }, 60_000);

  it('a call-count limit across three data planes: a client within it is never refused, a burst overshoots by at most max(10 %, 3)', async () => {
    const caller = await newAgent('caller');
    await setLimits([callLimit('daily_calls', 'search', 100)]);
    const within = await burst(90, caller, 'search');
    expect(statuses(within)).toEqual({ 200: 90 });
    await countedCalls('daily_calls', caller, 90);
    const past = await burst(90, caller, 'search');
    const allowed = 90 + past.filter((answer) => answer.status === 200).length;
    // Never fewer than the maximum (a refusal comes from the database, which counts every call it
    // was given), never more than max(10 % of 100, one per data plane) above it.
    expect(allowed).toBeGreaterThanOrEqual(100);
    expect(allowed).toBeLessThanOrEqual(110);
    expect(past.filter((answer) => answer.status !== 200).map((a) => a.body.reasonCode)).toEqual(
      Array(180 - allowed).fill('RATE_LIMIT_EXCEEDED'),
    );
    // Every allowed call reaches the database.
    await countedCalls('daily_calls', caller, allowed);
    console.info(`call-count limit 100 over 3 data planes: ${allowed} allowed of 180`);
  }, 60_000);

  it("a data plane's counts survive its restart: the restarted data plane goes on from the stored total", async () => {
    const restarted = await newAgent('restarted');
    await setLimits([callLimit('restart_calls', 'lookup', 30)]);
    const dp1 = planes[0] as DataPlaneProcess;
    for (let i = 0; i < 5; i++) expect((await inspect(dp1, restarted, 'lookup')).status).toBe(200);
    await d.stopDataPlane(dp1);
    // Stopping added what it had not sent yet.
    expect((await counter('restart_calls', restarted)).calls).toBe(5);
    await d.startDataPlane(dp1);
    await synced([dp1]);
    // One data plane counts exactly: 25 more, then refused.
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => inspect(dp1, restarted, 'lookup')),
    );
    expect(statuses(answers)).toEqual({ 200: 25, 429: 5 });
    await countedCalls('restart_calls', restarted, 30);
  }, 120_000);

  it('a data plane without its database: budgets refuse (503), call counts serve their local allowance, calls under no limit are served', async () => {
    const cut = await newAgent('cut-off');
    // maxCalls 300 over 3 data planes: each may allow ⌊300 / 10 / 3⌋ = 10 calls no other saw.
    await setLimits([budget(1000), callLimit('cut_calls', 'search', 300)]);
    const dp3 = planes[2] as DataPlaneProcess;
    const dp1 = planes[0] as DataPlaneProcess;
    dp3.databaseProxy?.cut();
    try {
      const refused = await inspect(dp3, cut, 'send_payment', { amount: 10 });
      expect(refused.status, JSON.stringify(refused.body)).toBe(503);
      expect(refused.body).toMatchObject({
        decision: 'deny',
        reasonCode: 'LIMIT_COUNTER_UNAVAILABLE',
      });
      // The trail is on the same database: answered anyway, without an audit entry, and logged.
      expect(refused.body.auditId).toBeUndefined();
      await dp3.cli.waitForLog('audit of a refusal failed: answered without an audit entry');
      expect((await inspect(dp3, cut, 'unlimited')).status).toBe(200);
      // A count dp-3 never read: from zero, a lower bound of the fleet's, up to its allowance.
      for (let i = 0; i < 10; i++) {
        const served = await inspect(dp3, cut, 'search');
        expect(served.status, `call ${i + 1}: ${JSON.stringify(served.body)}`).toBe(200);
      }
      // Past its allowance the database must decide: it cannot, so the call is refused.
      expect((await inspect(dp3, cut, 'search')).body).toMatchObject({
        reasonCode: 'LIMIT_COUNTER_UNAVAILABLE',
      });
      // The other data planes are not affected.
      expect((await inspect(dp1, cut, 'send_payment', { amount: 10 })).status).toBe(200);
    } finally {
      dp3.databaseProxy?.restore();
    }
    // The calls served without the database are added once it is back.
    await countedCalls('cut_calls', cut, 10);
    expect((await inspect(dp3, cut, 'send_payment', { amount: 10 })).status).toBe(200);
    expect(await counter('daily_spend', cut)).toEqual({ calls: 2, amount: 20 });
  }, 60_000);
});
