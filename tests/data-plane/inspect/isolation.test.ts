// Tenant isolation on the inspect path: a tenant's key reaches only its own agents, approvals,
// servers, published policies and mock results, and one tenant's configuration changes never
// change another's decisions. Denies land in the audit chain of the key's tenant only.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ApprovalId } from '../../../shared/ids.js';
import { findApproval } from '../../../storage/tables/approvals.js';
import { describeEachDatabase } from '../../support/databases.js';
import {
  inspectBody,
  startTestGateway,
  type TestGateway,
  type TestTenant,
} from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { countAuditEntries, expectDeny, getApproval } from './support.js';

const holdPolicy = (name: string) => ({
  version: '1.0.0',
  policyName: name,
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'hold_payments',
      action: 'REQUIRE_HUMAN',
      condition: "tool.name == 'echo' && args.text.startsWith('pay')",
      alertSeverity: 'MEDIUM',
    },
  ],
});

const A_MOCK = { content: [{ type: 'text', text: 'mock of tenant A' }] };

describeEachDatabase('tenant isolation on inspect', (kind) => {
  let gateway: TestGateway;
  let upstreamA: McpUpstream;
  let upstreamB: McpUpstream;
  let a: TestTenant;
  let b: TestTenant;
  let aPolicy: string;

  beforeAll(async () => {
    [upstreamA, upstreamB] = await Promise.all([
      startMcpUpstream({ responseMode: 'json', stateful: true, name: 'upstream-a' }),
      startMcpUpstream({ responseMode: 'sse', stateful: false, name: 'upstream-b' }),
    ]);
    gateway = await startTestGateway(kind);
    a = gateway.tenant;
    b = await gateway.addTenant();
    aPolicy = await gateway.publishPolicy(a.id, holdPolicy('a-hold'));
    const bPolicy = await gateway.publishPolicy(b.id, holdPolicy('b-hold'));
    await gateway.registerServer({
      tenantId: a.id,
      serverId: 'files',
      url: upstreamA.url,
      mockResults: { echo: A_MOCK },
    });
    await gateway.registerServer({ tenantId: a.id, serverId: 'private', url: upstreamA.url });
    await gateway.registerServer({ tenantId: b.id, serverId: 'files', url: upstreamB.url });
    await gateway.setPolicy(a.id, {
      trustedServers: ['files', 'private'],
      pinnedPolicies: [aPolicy],
    });
    await gateway.setPolicy(b.id, {
      trustedServers: ['files', 'private'],
      pinnedPolicies: [bPolicy],
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstreamA?.close();
    await upstreamB?.close();
  });

  const production = (agentId: string, overrides: Parameters<typeof inspectBody>[1] = {}) =>
    inspectBody(agentId, { mode: 'production', ...overrides });

  it('B’s key cannot inspect for A’s agent: AGENT_UNKNOWN, audited in B’s chain only', async () => {
    const auditA = await countAuditEntries(gateway.db, a.id);
    const requests = upstreamA.requests + upstreamB.requests;
    const answer = await gateway.inspect(production(a.agentId), { key: b.key });
    await expectDeny(gateway, answer, { status: 403, reasonCode: 'AGENT_UNKNOWN', tenantId: b.id });
    expect(await countAuditEntries(gateway.db, a.id)).toBe(auditA);
    expect(upstreamA.requests + upstreamB.requests).toBe(requests);
  });

  it('B can neither read nor use A’s approval', async () => {
    const held = await gateway.inspect(production(a.agentId, { args: { text: 'pay 1' } }));
    expect(held.status).toBe(202);
    const id = (held.body.approval as { id: ApprovalId }).id;

    const read = await getApproval(gateway, id, { key: b.key });
    expect(read.status).toBe(404);
    expect(read.body.reasonCode).toBe('APPROVAL_NOT_FOUND');

    const used = await gateway.inspect(
      production(b.agentId, { args: { text: 'pay 1' }, approvalId: id }),
      { key: b.key },
    );
    await expectDeny(gateway, used, {
      status: 404,
      reasonCode: 'APPROVAL_NOT_FOUND',
      tenantId: b.id,
    });
    expect((await findApproval(gateway.db, a.id, id))?.status).toBe('pending');
    expect((await getApproval(gateway, id)).status).toBe(200);
  });

  it('B cannot reach a server only A registered, even when B whitelists its id', async () => {
    const requests = upstreamA.requests;
    const { status, body } = await gateway.inspect(production(b.agentId, { server: 'private' }), {
      key: b.key,
    });
    expect(status).toBe(404);
    expect(body.reasonCode).toBe('MCP_SERVER_NOT_REGISTERED');
    expect(upstreamA.requests).toBe(requests);
  });

  it('B cannot name A’s published policy: it does not resolve for B (fail closed)', async () => {
    const forA = await gateway.inspect(production(a.agentId, { policy: aPolicy }));
    expect(forA.status).toBe(200);
    const forB = await gateway.inspect(production(b.agentId, { policy: aPolicy }), { key: b.key });
    await expectDeny(gateway, forB, {
      status: 403,
      reasonCode: 'NPL_REGISTRY_FAIL_CLOSED',
      tenantId: b.id,
    });
  });

  it('mock results are the tenant’s own', async () => {
    const forA = await gateway.inspect(inspectBody(a.agentId));
    expect(forA.body.response).toMatchObject({ result: A_MOCK });
    const forB = await gateway.inspect(inspectBody(b.agentId), { key: b.key });
    expect(forB.status).toBe(200);
    expect(forB.body.response).toMatchObject({ result: { _meta: { simulated: true } } });
  });

  it('A’s policy changes do not affect B', async () => {
    const blockA = {
      version: '1.0.0',
      policyName: 'a-block-all',
      targetAgents: ['*'],
      rules: [{ ruleId: 'block_all', action: 'BLOCK', condition: 'true', alertSeverity: 'LOW' }],
    };
    const blockUri = await gateway.publishPolicy(a.id, blockA);
    await gateway.setPolicy(a.id, { blockedTools: ['echo'], pinnedPolicies: [aPolicy, blockUri] });
    const forA = await gateway.inspect(production(a.agentId));
    await expectDeny(gateway, forA, {
      status: 403,
      reasonCode: 'MCP_METHOD_BLOCKED',
      tenantId: a.id,
    });
    const forA2 = await gateway.inspect(
      production(a.agentId, { tool: 'read_rows', args: { table: 't' } }),
    );
    await expectDeny(gateway, forA2, {
      status: 403,
      reasonCode: 'NPL_POLICY_BLOCK',
      tenantId: a.id,
    });

    const before = upstreamB.calls.get('echo') ?? 0;
    const forB = await gateway.inspect(production(b.agentId), { key: b.key });
    expect(forB.status).toBe(200);
    expect(forB.body.response).toMatchObject({ result: { structuredContent: { text: 'hello' } } });
    expect(upstreamB.calls.get('echo')).toBe(before + 1);
    // B's held calls still follow B's own policy.
    const heldB = await gateway.inspect(production(b.agentId, { args: { text: 'pay 2' } }), {
      key: b.key,
    });
    expect(heldB.status).toBe(202);
  });
});
