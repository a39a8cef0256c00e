// `forward: false`: the agent runs the tool itself (the client library's wrapped tools). The
// gateway decides, audits, holds and denies exactly as always, but never contacts the upstream
// and never mints a forward token; an allow answers `forwarded: false` without `response`, and
// a simulation still answers its mock (that is the simulated result).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveApproval } from '../../../control-plane/services/approvals.js';
import {
  inspectBody,
  startTestGateway,
  type TestGateway,
  type TestTenant,
} from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { expectDeny, quickDatabaseKind } from './support.js';

const POLICY = {
  version: '1.0.0',
  policyName: 'no-forward-rules',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'hold_payments',
      action: 'REQUIRE_HUMAN',
      condition: "tool.name == 'echo' && args.text == 'pay'",
      alertSeverity: 'MEDIUM',
    },
    {
      ruleId: 'block_secrets',
      action: 'BLOCK',
      condition: "tool.name == 'echo' && args.text == 'secret'",
      alertSeverity: 'CRITICAL',
    },
  ],
};

const ECHO_MOCK = { content: [{ type: 'text', text: 'mocked echo' }] };

describe('inspect with forward: false', () => {
  let gateway: TestGateway;
  let upstream: McpUpstream;
  let tenant: TestTenant;
  let policyUri: string;

  const body = (
    mode: string,
    text: string,
    forward: unknown,
    extra: { approvalId?: string } = {},
  ) => {
    const b = inspectBody(tenant.agentId, { mode, args: { text }, ...extra });
    if (forward !== undefined) b.forward = forward;
    return b;
  };

  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
    // Forwards must carry a gateway-minted token: a forward: false allow needs none.
    gateway = await startTestGateway(quickDatabaseKind, { requireMcpOAuth: true });
    tenant = gateway.tenant;
    policyUri = await gateway.publishPolicy(tenant.id, POLICY);
    await gateway.registerServer({
      tenantId: tenant.id,
      serverId: 'files',
      url: upstream.url,
      mockResults: { echo: ECHO_MOCK },
    });
    await gateway.setPolicy(tenant.id, {
      trustedServers: ['files', 'unregistered'],
      pinnedPolicies: [policyUri],
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('production allow: 200 forwarded false, no response, nothing upstream, no token minted', async () => {
    const requests = upstream.requests;
    const minted = await tokensIssued(gateway);
    const answer = await gateway.inspect(body('production', 'hello', false));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      decision: 'allow',
      reasonCode: null,
      inspectionId: expect.any(String),
      executionMode: 'production',
      enforced: true,
      ruleId: 'npl_default_allow',
      policy: policyUri,
      alertSeverity: 'LOW',
      forwarded: false,
    });
    expect(upstream.requests).toBe(requests);
    expect(await tokensIssued(gateway)).toBe(minted);
  });

  it('a server whitelisted but not registered is still decided: the agent runs the tool', async () => {
    const answer = await gateway.inspect({
      ...body('production', 'hello', false),
      server_id: 'unregistered',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ decision: 'allow', reasonCode: null, forwarded: false });
    expect(answer.body).not.toHaveProperty('response');
  });

  it('forward: true (and leaving it out) forwards as before', async () => {
    for (const forward of [true, undefined]) {
      const calls = upstream.calls.get('echo') ?? 0;
      const answer = await gateway.inspect(body('production', 'hello', forward));
      expect(answer.status).toBe(200);
      expect(answer.body).not.toHaveProperty('forwarded');
      expect(answer.body.response).toMatchObject({ jsonrpc: '2.0', id: 1, result: {} });
      expect(upstream.calls.get('echo')).toBe(calls + 1);
    }
  });

  it('simulation answers its mock, unchanged', async () => {
    const requests = upstream.requests;
    const answer = await gateway.inspect(body('simulation', 'hello', false));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      decision: 'allow',
      reasonCode: null,
      inspectionId: expect.any(String),
      executionMode: 'simulation',
      enforced: true,
      ruleId: 'npl_default_allow',
      policy: policyUri,
      alertSeverity: 'LOW',
      simulated: true,
      response: { jsonrpc: '2.0', id: 1, result: ECHO_MOCK },
    });
    expect(upstream.requests).toBe(requests);
  });

  it('a block is the same audited deny', async () => {
    const answer = await gateway.inspect(body('production', 'secret', false));
    await expectDeny(gateway, answer, {
      status: 403,
      reasonCode: 'NPL_POLICY_BLOCK',
      tenantId: tenant.id,
    });
    expect(answer.body).toMatchObject({ ruleId: 'block_secrets', policy: policyUri });
  });

  it('shadow: evaluated and reported, not forwarded', async () => {
    const requests = upstream.requests;
    const answer = await gateway.inspect(body('shadow', 'secret', false));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      decision: 'allow',
      enforced: false,
      forwarded: false,
      shadow: { decision: 'deny', reasonCode: 'NPL_POLICY_BLOCK', ruleId: 'block_secrets' },
    });
    expect(answer.body).not.toHaveProperty('response');
    expect(upstream.requests).toBe(requests);
  });

  it('a held call is held; once approved, its resubmission is allowed and not forwarded', async () => {
    const requests = upstream.requests;
    const held = await gateway.inspect(body('production', 'pay', false));
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({
      decision: 'require_human_approval',
      reasonCode: 'NPL_REQUIRE_HUMAN',
      approval: { id: expect.any(String), status: 'pending' },
    });
    const id = (held.body.approval as { id: string }).id;
    await resolveApproval(
      gateway.db,
      gateway.runtime.audit,
      { tenantId: tenant.id, id, decision: 'approved', decidedBy: 'operator@test' },
      gateway.runtime.events,
    );
    const released = await gateway.inspect(body('production', 'pay', false, { approvalId: id }));
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({
      decision: 'allow',
      reasonCode: null,
      forwarded: false,
      ruleId: 'hold_payments',
    });
    expect(released.body).not.toHaveProperty('response');
    expect(upstream.requests).toBe(requests);
  });

  it.each([['false'], [0], [null]])(
    'forward %j is the audited 400 naming the field',
    async (value) => {
      const answer = await gateway.inspect(body('production', 'hello', value));
      await expectDeny(gateway, answer, {
        status: 400,
        reasonCode: 'MCP_MALFORMED_RPC',
        tenantId: tenant.id,
      });
      expect(answer.body.message).toMatch(/^forward must be true or false, not /);
    },
  );
});

async function tokensIssued(gateway: TestGateway): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('agent_gateway_oauth_tokens_issued_total{kind="forward"}'));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}
