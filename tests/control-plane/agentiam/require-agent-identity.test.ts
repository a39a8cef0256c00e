// The gateway-policy switch requireAgentIdentity (spec §5.5, DESIGN.md §6): false for a new
// tenant, changed through updateGatewayPolicy, audited like any policy field and published to the
// data plane before the mutation answers.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AgentIamTestGateway, startAgentIamGateway } from '../../support/agentiam.js';
import { describeEachDatabase } from '../../support/databases.js';
import { graphql, type Loose } from '../graphql/support.js';

const UPDATE = `mutation ($value: Boolean) {
  updateGatewayPolicy(input: { requireAgentIdentity: $value }) {
    __typename
    ... on MutationUpdateGatewayPolicySuccess { data { requireAgentIdentity maxDelegationDepth } }
  }
}`;

describeEachDatabase('requireAgentIdentity in the gateway policy', (kind) => {
  let gateway: AgentIamTestGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startAgentIamGateway(kind);
    key = await gateway.addApiKey(gateway.tenant.id, ['policies:manage']);
  }, 60_000);
  afterAll(() => gateway?.close());

  const served = () =>
    gateway.runtime.store.current?.tenants.get(gateway.tenant.id)?.source.gatewayPolicy
      .requireAgentIdentity;

  it('is false for a new tenant', async () => {
    const answer = await graphql<Loose>(
      gateway.url,
      key,
      '{ gatewayPolicy { requireAgentIdentity } }',
    );
    expect(answer.data.gatewayPolicy).toEqual({ requireAgentIdentity: false });
    expect(served()).toBe(false);
  });

  it('is switched on and off through updateGatewayPolicy, published and audited', async () => {
    for (const value of [true, false]) {
      const answer = await graphql<Loose>(gateway.url, key, UPDATE, { value });
      expect(answer.errors).toBeUndefined();
      expect(answer.data.updateGatewayPolicy).toEqual({
        __typename: 'MutationUpdateGatewayPolicySuccess',
        data: { requireAgentIdentity: value, maxDelegationDepth: 3 },
      });
      expect(served()).toBe(value);
    }
    const entries = await gateway.db.prisma.auditEntry.findMany({
      where: { tenantId: gateway.tenant.id, action: 'gateway_policy.updated' },
    });
    expect(entries.map((entry) => (entry.metadata as Loose).fields)).toEqual([
      ['requireAgentIdentity'],
      ['requireAgentIdentity'],
    ]);
  });
});
