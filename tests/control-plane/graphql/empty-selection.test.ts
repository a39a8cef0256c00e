// A mutation or query whose selection asks for no column of a Prisma object (only `__typename`,
// or only a union member's `__typename`) still succeeds: the resolver must not hand Prisma an
// empty `select`, which Prisma refuses ("The `select` statement for type X must not be empty").
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { graphql, type Loose } from './support.js';

const POLICY = `policyName: empty-selection
version: 1.0.0
targetAgents: ['*']
rules:
  - ruleId: block_delete
    action: BLOCK
    condition: "tool.name == 'delete'"
    alertSeverity: MEDIUM
`;

describeEachDatabase('GraphQL selections without Prisma fields', (kind) => {
  let gw: TestGateway;
  let admin: string;
  const q = (query: string, variables?: Record<string, unknown>) =>
    graphql<Record<string, Loose>>(gw.url, admin, query, variables);

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
  });
  afterAll(() => gw?.close());

  it('updateGatewayPolicy selecting only __typename succeeds and stores the change', async () => {
    const answer = await q(
      'mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) { __typename } }',
      { i: { blockedTools: ['delete'] } },
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.updateGatewayPolicy).toEqual({
      __typename: 'MutationUpdateGatewayPolicySuccess',
    });
    const nested = await q(
      `mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) {
        ... on MutationUpdateGatewayPolicySuccess { data { __typename } } } }`,
      { i: { blockedTools: [] } },
    );
    expect(nested.errors).toBeUndefined();
    expect(nested.data?.updateGatewayPolicy.data).toEqual({ __typename: 'GatewayPolicy' });
    const read = await q('{ gatewayPolicy { __typename blockedTools } }');
    expect(read.data?.gatewayPolicy).toEqual({ __typename: 'GatewayPolicy', blockedTools: [] });
    expect((await q('{ gatewayPolicy { __typename } }')).errors).toBeUndefined();
  });

  it('every mutation returning a Prisma object accepts a __typename-only selection', async () => {
    const created = await q(
      'mutation($i: CreateAgentInput!) { createAgent(input: $i) { __typename } }',
      { i: { name: 'typename-only', publicKey: newAgentPublicKey(), allowedTools: ['*'] } },
    );
    expect(created.errors).toBeUndefined();
    expect(created.data?.createAgent).toEqual({ __typename: 'Agent' });

    const agentId = gw.tenant.agentId;
    const updated = await q(
      'mutation($id: ID!) { updateAgent(id: $id, input: { role: "reader" }) { __typename } }',
      { id: agentId },
    );
    expect(updated.errors).toBeUndefined();

    const key = await q(
      'mutation { createApiKey(input: { name: "t", scopes: ["audit:read"] }) { apiKey { __typename } } }',
    );
    expect(key.errors).toBeUndefined();
    const keys = await q('{ apiKeys { id name } }');
    const keyId = keys.data?.apiKeys.find((k: { name: string }) => k.name === 't').id;
    const revoked = await q('mutation($id: ID!) { revokeApiKey(id: $id) { __typename } }', {
      id: keyId,
    });
    expect(revoked.errors).toBeUndefined();

    const server = await q(
      'mutation { registerMcpServer(input: { serverId: "tn", url: "http://127.0.0.1:11/" }) { __typename } }',
    );
    expect(server.errors).toBeUndefined();
    const serverUpdate = await q(
      'mutation { updateMcpServer(serverId: "tn", input: { url: "http://127.0.0.1:12/" }) { __typename } }',
    );
    expect(serverUpdate.errors).toBeUndefined();

    const published = await q(
      `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
        ... on MutationPublishNplPolicySuccess { data { policyVersion { __typename } } } } }`,
      { i: { source: POLICY } },
    );
    expect(published.errors).toBeUndefined();
    expect(published.data?.publishNplPolicy.data.policyVersion).toEqual({
      __typename: 'NplPolicyVersion',
    });

    const tenant = await q(
      'mutation { createTenant(input: { name: "typename-only-tenant" }) { tenant { __typename } } }',
    );
    expect(tenant.errors).toBeUndefined();
    expect((await q('{ tenants { __typename } }')).errors).toBeUndefined();
    expect((await q('{ dataPlanes { __typename } }')).errors).toBeUndefined();
  });
});
