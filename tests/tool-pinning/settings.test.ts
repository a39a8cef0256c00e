// The tenant and agent settings of the MCP proxy and of pinning, through GraphQL: toolPinning,
// approvalWaitSeconds, proxyExecutionMode and proxyModeHeader on the gateway policy (every wrong
// field listed, nothing stored), an agent's executionMode on create and update; each reaches the
// data plane's compiled snapshot when the mutation answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCodes, graphql, type Loose } from '../control-plane/graphql/support.js';
import { quickDatabaseKind } from '../data-plane/inspect/support.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

const UPDATE_POLICY = `mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) {
  __typename
  ... on GatewayPolicyValidationError { issues { field message } }
  ... on MutationUpdateGatewayPolicySuccess {
    data { toolPinning approvalWaitSeconds proxyExecutionMode proxyModeHeader }
  }
} }`;
const PUBLIC_KEY = 'z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';

describe('proxy and pinning settings', () => {
  let gw: TestGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startTestGateway(quickDatabaseKind);
    admin = await gw.addApiKey(gw.tenant.id, ['policies:manage', 'agents:manage']);
  });
  afterAll(async () => {
    await gw?.close();
  });
  const ask = (query: string, variables: Record<string, unknown> = {}) =>
    graphql<Record<string, Loose>>(gw.url, admin, query, variables);
  const compiledTenant = () => gw.runtime.store.current?.tenants.get(gw.tenant.id);

  it('defaults: first_sight, 120 s, production, no header', async () => {
    const read = await ask(
      '{ gatewayPolicy { toolPinning approvalWaitSeconds proxyExecutionMode proxyModeHeader } }',
    );
    expect(read.data?.gatewayPolicy).toEqual({
      toolPinning: 'first_sight',
      approvalWaitSeconds: 120,
      proxyExecutionMode: 'production',
      proxyModeHeader: false,
    });
    expect(compiledTenant()?.policy).toMatchObject({
      toolPinning: 'first_sight',
      approvalWaitMs: 120_000,
      proxyExecutionMode: 'production',
      proxyModeHeader: false,
    });
  });

  it('refuses wrong values field by field and stores nothing', async () => {
    const answer = await ask(UPDATE_POLICY, {
      i: { toolPinning: 'never', approvalWaitSeconds: 3601, proxyExecutionMode: 'warp' },
    });
    const result = answer.data?.updateGatewayPolicy;
    expect(result.__typename).toBe('GatewayPolicyValidationError');
    expect(result.issues.map((issue: { field: string }) => issue.field).sort()).toEqual([
      'approvalWaitSeconds',
      'proxyExecutionMode',
      'toolPinning',
    ]);
    expect(compiledTenant()?.policy.toolPinning).toBe('first_sight');
  });

  it('stores and serves valid values at once', async () => {
    const answer = await ask(UPDATE_POLICY, {
      i: {
        toolPinning: 'approved_only',
        approvalWaitSeconds: 0,
        proxyExecutionMode: 'shadow',
        proxyModeHeader: true,
      },
    });
    expect(answer.data?.updateGatewayPolicy.data).toEqual({
      toolPinning: 'approved_only',
      approvalWaitSeconds: 0,
      proxyExecutionMode: 'shadow',
      proxyModeHeader: true,
    });
    expect(compiledTenant()?.policy).toMatchObject({
      toolPinning: 'approved_only',
      approvalWaitMs: 0,
      proxyExecutionMode: 'shadow',
      proxyModeHeader: true,
    });
  });

  it("sets, clears and refuses an agent's executionMode", async () => {
    const created = await ask(
      `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id executionMode } }`,
      {
        i: {
          name: 'moded',
          publicKey: PUBLIC_KEY,
          allowedTools: ['*'],
          executionMode: 'simulation',
        },
      },
    );
    expect(created.errors).toBeUndefined();
    const id = created.data?.createAgent.id as string;
    expect(created.data?.createAgent.executionMode).toBe('simulation');
    expect(compiledTenant()?.agents.get(id)?.executionMode).toBe('simulation');

    const update = (executionMode: unknown) =>
      ask(
        `mutation($id: ID!, $i: UpdateAgentInput!) {
          updateAgent(id: $id, input: $i) { executionMode } }`,
        { id, i: { executionMode } },
      );
    const refused = await update('warp');
    expect(errorCodes(refused)).toEqual(['REQUEST_INVALID']);
    expect(compiledTenant()?.agents.get(id)?.executionMode).toBe('simulation');
    expect((await update(null)).data?.updateAgent.executionMode).toBeNull();
    expect(compiledTenant()?.agents.get(id)?.executionMode).toBeNull();
    expect(compiledTenant()?.agents.get(gw.tenant.agentId)?.executionMode).toBeNull();
  });
});
