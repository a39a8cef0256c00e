// Usage limits and budgets on one gateway (docs/limits.md), configured the way an operator does
// (GraphQL updateGatewayPolicy) and met through inspect: budgets refused exactly at their maximum
// with 429, Retry-After and the `limit` object, audited; call counts per agent and tool; invalid
// amounts refused 400 and counted nowhere; REQUIRE_HUMAN holds whose approved resubmission
// passes and counts; NPL reading `usage`; shadow calls counted with a counterfactual; Agent.usage
// and the metric. Concurrency across data planes: tests/control-plane/limits-fleet.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../control-plane/graphql/support.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/until.js';
import { findAuditEntry, quickDatabaseKind } from '../inspect/support.js';

/** 30 days: no test here may straddle the end of a window (one a month, at 00:00 UTC). */
const WINDOW = 2_592_000;

const UPDATE = `mutation($input: GatewayPolicyInput!) {
  updateGatewayPolicy(input: $input) {
    __typename
    ... on GatewayPolicyValidationError { issues { field message } }
    ... on MutationUpdateGatewayPolicySuccess { data { limits { limitId per maxSum } } }
  }
}`;

const USAGE = `query($id: ID!) {
  agent(id: $id) { usage { limitId per toolName calls sum used max windowStartsAt resetsAt } }
}`;

describe('usage limits on one gateway', () => {
  let gateway: TestGateway;
  let admin: string;

  async function setLimits(limits: unknown[]) {
    const answer = await graphql<{ updateGatewayPolicy: { __typename: string } }>(
      gateway.url,
      admin,
      UPDATE,
      { input: { limits } },
    );
    expect(answer.data?.updateGatewayPolicy.__typename).toBe('MutationUpdateGatewayPolicySuccess');
    await gateway.sync();
  }

  async function usageCounters() {
    return gateway.db.query<{
      limitId: string;
      agentId: string;
      toolName: string;
      calls: string;
      amount: string;
    }>(
      'select "limitId", "agentId", "toolName", calls::text, amount::text from usage_counters order by 1, 2, 3',
    );
  }

  beforeAll(async () => {
    gateway = await startTestGateway(quickDatabaseKind);
    admin = await gateway.addApiKey(gateway.tenant.id, [
      'policies:manage',
      'agents:manage',
      'audit:read',
      'approvals:decide',
    ]);
    await gateway.setPolicy(gateway.tenant.id, { trustedServers: ['files'] });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('refuses an invalid list with every wrong field, and stores nothing', async () => {
    const answer = await graphql<{
      updateGatewayPolicy: { __typename: string; issues: { field: string; message: string }[] };
    }>(gateway.url, admin, UPDATE, {
      input: {
        limits: [
          { limitId: 'ok_one', per: 'AGENT', windowSeconds: 60, maxCalls: 5, action: 'DENY' },
          { limitId: 'Bad-Id', per: 'AGENT', windowSeconds: 0, maxCalls: 0, action: 'DENY' },
          {
            limitId: 'ok_one',
            per: 'TENANT',
            windowSeconds: 60,
            sumArgument: 'amount',
            action: 'DENY',
          },
          { limitId: 'nothing', per: 'TENANT', windowSeconds: 2_592_001, action: 'DENY' },
        ],
      },
    });
    const result = answer.data?.updateGatewayPolicy;
    expect(result?.__typename).toBe('GatewayPolicyValidationError');
    expect(result?.issues.map((issue) => issue.field).sort()).toEqual(
      [
        'limits[1].limitId',
        'limits[1].windowSeconds',
        'limits[1].maxCalls',
        'limits[2].maxSum',
        'limits[2].limitId',
        'limits[3].windowSeconds',
        'limits[3].maxCalls',
      ].sort(),
    );
    const stored = await gateway.db.prisma.gatewayPolicy.findUniqueOrThrow({
      where: { tenantId: gateway.tenant.id },
    });
    expect(stored.limits).toEqual([]);
  });

  it('holds a budget exactly at its maximum: 429 BUDGET_EXCEEDED with Retry-After and the limit, audited', async () => {
    await setLimits([
      {
        limitId: 'daily_payments',
        per: 'AGENT',
        tools: ['send_payment'],
        windowSeconds: 86_400,
        sumArgument: 'payment.amount',
        maxSum: 250.5,
        action: 'DENY',
      },
    ]);
    const pay = (amount: unknown) =>
      gateway.inspect(
        inspectBody(gateway.tenant.agentId, {
          tool: 'send_payment',
          args: { payment: { amount } },
        }),
      );
    expect((await pay(100)).body.decision).toBe('allow');
    expect((await pay(100.25)).body.decision).toBe('allow');
    const response = await fetch(`${gateway.url}/api/v1/mcp/gateway/inspect`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gateway.tenant.key}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(
        inspectBody(gateway.tenant.agentId, {
          tool: 'send_payment',
          args: { payment: { amount: 50.5 } },
        }),
      ),
    });
    const refused = (await response.json()) as Record<string, unknown>;
    expect(response.status).toBe(429);
    expect(refused).toMatchObject({ decision: 'deny', reasonCode: 'BUDGET_EXCEEDED' });
    const limit = refused.limit as Record<string, unknown>;
    expect(limit).toMatchObject({
      limitId: 'daily_payments',
      per: 'AGENT',
      windowSeconds: 86_400,
      used: 200.25,
      max: 250.5,
      requested: 50.5,
    });
    expect(Number(response.headers.get('retry-after'))).toBe(limit.retryAfterSeconds);
    expect(Date.parse(limit.resetsAt as string) % 86_400_000).toBe(0);
    const audit = await findAuditEntry(gateway.db, refused.auditId);
    expect(audit?.metadata).toMatchObject({
      reasonCode: 'BUDGET_EXCEEDED',
      limit: { limitId: 'daily_payments' },
    });
    // Exactly to the maximum still passes; other tools are not counted.
    expect((await pay(50.25)).body.decision).toBe('allow');
    expect((await pay(0.01)).status).toBe(429);
    expect((await gateway.inspect(inspectBody(gateway.tenant.agentId))).body.decision).toBe(
      'allow',
    );
    const counters = await usageCounters();
    expect(counters).toEqual([
      {
        limitId: 'daily_payments',
        agentId: gateway.tenant.agentId,
        toolName: '',
        calls: '3',
        amount: '250.5000000000',
      },
    ]);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toContain(
      'agent_gateway_limit_hits_total{limit_id="daily_payments",action="DENY"} 2',
    );
  });

  it('refuses an amount that is missing, not a JSON number or negative with 400, counting nothing', async () => {
    const before = await usageCounters();
    for (const args of [
      {},
      { payment: { amount: '10' } },
      { payment: { amount: -1 } },
      { payment: 5 },
    ]) {
      const { status, body } = await gateway.inspect(
        inspectBody(gateway.tenant.agentId, { tool: 'send_payment', args }),
      );
      expect(status).toBe(400);
      expect(body).toMatchObject({ decision: 'deny', reasonCode: 'BUDGET_ARGUMENT_INVALID' });
      expect(body.message).toContain('payment.amount');
    }
    expect(await usageCounters()).toEqual(before);
  });

  it('counts calls per agent and tool exactly, under concurrency', async () => {
    await setLimits([
      {
        limitId: 'per_tool',
        per: 'AGENT_TOOL',
        tools: ['search*'],
        windowSeconds: WINDOW,
        maxCalls: 7,
        action: 'DENY',
      },
    ]);
    const call = (tool: string) =>
      gateway.inspect(inspectBody(gateway.tenant.agentId, { tool, args: { q: 'x' } }));
    const answers = await Promise.all(Array.from({ length: 20 }, () => call('search_docs')));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(7);
    expect(statuses.filter((status) => status === 429)).toHaveLength(13);
    expect(answers.find((answer) => answer.status === 429)?.body).toMatchObject({
      reasonCode: 'RATE_LIMIT_EXCEEDED',
      limit: { limitId: 'per_tool', per: 'AGENT_TOOL', used: 7, max: 7, requested: 1 },
    });
    // Another tool has its own counter; a tool the limit does not name is not counted.
    expect((await call('search_web')).status).toBe(200);
    expect((await call('echo')).status).toBe(200);
    // Call counts reach the database in batches: wait for the data plane's flush, not for time.
    const usage = await until(
      () =>
        graphql<{ agent: { usage: Record<string, unknown>[] } }>(gateway.url, admin, USAGE, {
          id: gateway.tenant.agentId,
        }),
      (answer) =>
        answer.data?.agent.usage.find((row) => row.toolName === 'search_docs')?.calls === 7,
      'Agent.usage counts the 7 calls',
    );
    const rows = usage.data?.agent.usage ?? [];
    expect(rows.map((row) => row.toolName).sort()).toEqual(['search_docs', 'search_web']);
    expect(rows.find((row) => row.toolName === 'search_docs')).toMatchObject({
      limitId: 'per_tool',
      per: 'AGENT_TOOL',
      calls: 7,
      used: 7,
      max: 7,
      sum: null,
    });
  });

  it('holds a call past a REQUIRE_HUMAN budget; the approved resubmission passes and counts past the maximum', async () => {
    await setLimits([
      {
        limitId: 'big_spend',
        per: 'TENANT',
        tools: ['send_payment'],
        windowSeconds: WINDOW,
        sumArgument: 'amount',
        maxSum: 100,
        action: 'REQUIRE_HUMAN',
      },
    ]);
    const body = (amount: number, approvalId?: string) =>
      inspectBody(gateway.tenant.agentId, {
        tool: 'send_payment',
        args: { amount },
        ...(approvalId ? { approvalId } : {}),
      });
    expect((await gateway.inspect(body(60))).status).toBe(200);
    const held = await gateway.inspect(body(60));
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({
      decision: 'require_human_approval',
      reasonCode: 'LIMIT_REQUIRE_HUMAN',
      limit: { limitId: 'big_spend', per: 'TENANT', used: 60, max: 100, requested: 60 },
    });
    const approvalId = (held.body.approval as { id: string }).id;
    const approval = await graphql<{ approval: { limit: Record<string, unknown> | null } }>(
      gateway.url,
      admin,
      'query($id: ID!) { approval(id: $id) { limit { limitId used max requested } } }',
      { id: approvalId },
    );
    expect(approval.data?.approval.limit).toEqual({
      limitId: 'big_spend',
      used: 60,
      max: 100,
      requested: 60,
    });
    const decided = await graphql<{ approveApproval: { status: string } }>(
      gateway.url,
      admin,
      'mutation($id: ID!) { approveApproval(id: $id) { status } }',
      { id: approvalId },
    );
    expect(decided.data?.approveApproval.status).toBe('APPROVED');
    const passed = await gateway.inspect(body(60, approvalId));
    expect(passed.status).toBe(200);
    const [counter] = (await usageCounters()).filter((row) => row.limitId === 'big_spend');
    expect(counter).toMatchObject({ agentId: '', calls: '2', amount: '120.0000000000' });
    // Used once: the same approval does not pass again.
    expect((await gateway.inspect(body(60, approvalId))).status).not.toBe(200);
  });

  it('gives NPL the usage of the window: a rule on usage.<limitId>.sumAfter decides', async () => {
    const uri = await gateway.publishPolicy(gateway.tenant.id, {
      version: '1.0.0',
      policyName: 'spend-watch',
      targetAgents: ['*'],
      rules: [
        {
          ruleId: 'block_past_150',
          action: 'BLOCK',
          condition: "tool.name == 'transfer' && usage.transfers.sumAfter > 150",
          alertSeverity: 'CRITICAL',
        },
      ],
    });
    await gateway.setPolicy(gateway.tenant.id, { pinnedPolicies: [uri] });
    await setLimits([
      {
        limitId: 'transfers',
        per: 'AGENT',
        tools: ['transfer'],
        windowSeconds: WINDOW,
        sumArgument: 'amount',
        maxSum: 1000,
        action: 'DENY',
      },
    ]);
    const transfer = (amount: number) =>
      gateway.inspect(inspectBody(gateway.tenant.agentId, { tool: 'transfer', args: { amount } }));
    expect((await transfer(100)).status).toBe(200);
    const blocked = await transfer(60);
    expect(blocked.status).toBe(403);
    expect(blocked.body).toMatchObject({
      reasonCode: 'NPL_POLICY_BLOCK',
      ruleId: 'block_past_150',
    });
    // NPL blocked it before the limit step: not counted.
    expect((await transfer(50)).status).toBe(200);
    await gateway.setPolicy(gateway.tenant.id, { pinnedPolicies: [] });
  });

  it('counts shadow calls and writes what a limit would have done as a counterfactual', async () => {
    await setLimits([
      {
        limitId: 'shadowed',
        per: 'AGENT',
        tools: ['echo'],
        windowSeconds: WINDOW,
        maxCalls: 1,
        action: 'DENY',
      },
    ]);
    const shadow = () =>
      gateway.inspect(inspectBody(gateway.tenant.agentId, { mode: 'simulation' }));
    expect((await shadow()).status).toBe(200);
    const answer = await gateway.inspect(
      inspectBody(gateway.tenant.agentId, { mode: 'shadow', tool: 'echo' }),
    );
    // Shadow forwards (no upstream registered here: the forward fails), never refuses for a limit.
    expect(answer.body.shadow).toMatchObject({
      decision: 'deny',
      reasonCode: 'RATE_LIMIT_EXCEEDED',
    });
    expect(answer.body.enforced).toBe(false);
  });
});
