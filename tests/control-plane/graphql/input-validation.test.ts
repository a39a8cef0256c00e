// GraphQL inputs are validated before any resolver runs (zod rules given to Pothos' `validate:`):
// a wrong input answers REQUEST_INVALID with one issue per wrong field, named by its path, and
// changes nothing. createAgent and updateAgent obey the same agent rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { errorCodes, type GraphQLAnswer, graphql, type Loose } from './support.js';

/** The fields named by the issues of a REQUEST_INVALID answer. */
function invalidFields(answer: GraphQLAnswer<unknown>): string[] {
  expect(errorCodes(answer)).toEqual(['REQUEST_INVALID']);
  const issues = answer.errors?.[0]?.extensions?.issues as { field: string }[] | undefined;
  return (issues ?? []).map((issue) => issue.field).sort();
}

describe('GraphQL input validation', () => {
  let gw: TestGateway;
  let admin: string;
  let agentId: string;
  const q = (query: string, variables?: Record<string, unknown>) =>
    graphql<Record<string, Loose>>(gw.url, admin, query, variables);
  const CREATE_AGENT =
    'mutation($i: CreateAgentInput!) { createAgent(input: $i) { id role allowedTools } }';
  const UPDATE_AGENT =
    'mutation($id: ID!, $i: UpdateAgentInput!) { updateAgent(id: $id, input: $i) { role } }';

  beforeAll(async () => {
    gw = await startTestGateway('pglite');
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
    agentId = gw.tenant.agentId;
  });
  afterAll(() => gw?.close());

  const agentCount = async () =>
    (await q('{ agents(first: 100) { edges { node { id } } } }')).data?.agents.edges.length;

  it('createAgent names every wrong field and creates nothing', async () => {
    const before = await agentCount();
    const answer = await q(CREATE_AGENT, {
      i: {
        name: '   ',
        publicKey: 'z'.repeat(513),
        role: '',
        allowedTools: ['read', ''],
      },
    });
    expect(invalidFields(answer)).toEqual([
      'input.allowedTools.1',
      'input.name',
      'input.publicKey',
      'input.role',
    ]);
    expect(answer.errors?.[0]?.message).toContain('input.publicKey');
    expect(await agentCount()).toBe(before);
  });

  it('updateAgent obeys the same role and tool rules as createAgent', async () => {
    const tooMany = Array.from({ length: 1001 }, (_, index) => `tool-${index}`);
    const create = await q(CREATE_AGENT, {
      i: {
        name: 'x',
        publicKey: newAgentPublicKey(),
        role: 'r'.repeat(101),
        allowedTools: tooMany,
      },
    });
    expect(invalidFields(create)).toEqual(['input.allowedTools', 'input.role']);
    const update = await q(UPDATE_AGENT, {
      id: agentId,
      i: { role: 'r'.repeat(101), allowedTools: tooMany },
    });
    expect(invalidFields(update)).toEqual(['input.allowedTools', 'input.role']);
    const blank = await q(UPDATE_AGENT, { id: agentId, i: { role: ' ' } });
    expect(invalidFields(blank)).toEqual(['input.role']);
    const unchanged = await q('query($id: ID!) { agent(id: $id) { role } }', { id: agentId });
    expect(unchanged.data?.agent.role).not.toBe(' ');
  });

  it('a valid agent at the limits of the rules is created', async () => {
    const answer = await q(CREATE_AGENT, {
      i: {
        name: 'n'.repeat(200),
        publicKey: newAgentPublicKey(),
        role: 'r'.repeat(100),
        allowedTools: ['t'.repeat(256)],
      },
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.createAgent.role).toBe('r'.repeat(100));
  });

  it('api keys and tenants: names and scopes are checked', async () => {
    const key = await q('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { secret } }', {
      i: { name: '', scopes: ['audit:read', 'nope'] },
    });
    expect(invalidFields(key)).toEqual(['input.name', 'input.scopes.1']);
    const tenant = await q(
      'mutation($i: CreateTenantInput!) { createTenant(input: $i) { apiKeyId } }',
      { i: { name: 'no-scopes', initialKeyScopes: [] } },
    );
    expect(invalidFields(tenant)).toEqual(['input.initialKeyScopes']);
  });

  it('api keys: an expiresAt in the past is refused and no key is created', async () => {
    const keys = async () => (await q('{ apiKeys { id } }')).data?.apiKeys;
    const before = await keys();
    const answer = await q(
      'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { secret } }',
      { i: { name: 'expired', scopes: ['audit:read'], expiresAt: '2001-01-01T00:00:00Z' } },
    );
    expect(invalidFields(answer)).toEqual(['input.expiresAt']);
    expect(answer.errors?.[0]?.message).toContain('input.expiresAt');
    expect(await keys()).toEqual(before);
    const future = await q(
      'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { apiKey { expiresAt } } }',
      { i: { name: 'later', scopes: ['audit:read'], expiresAt: '2999-01-01T00:00:00Z' } },
    );
    expect(future.data?.createApiKey.apiKey.expiresAt).toBe('2999-01-01T00:00:00.000Z');
  });

  it('npl: exactly one of source and document, a document is an object, URIs are pinned', async () => {
    const publish =
      'mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) { __typename } }';
    expect(invalidFields(await q(publish, { i: {} }))).toEqual(['input']);
    expect(invalidFields(await q(publish, { i: { source: 'x', document: {} } }))).toEqual([
      'input',
    ]);
    expect(invalidFields(await q(publish, { i: { document: [1] } }))).toEqual(['input.document']);
    const read = await q('{ nplPolicyVersion(uri: "svc://unpinned") { id } }');
    expect(invalidFields(read)).toEqual(['uri']);
    expect(read.errors?.[0]?.message).toContain('not pinned to a version');
    expect(invalidFields(await q('mutation { pinNplPolicy(uri: "nope") }'))).toEqual(['uri']);
  });

  it('npl pins: a malformed URI is said to be malformed, with the expected form, and nothing is pinned', async () => {
    const pins = async () => (await q('{ gatewayPolicy { pinnedPolicies } }')).data?.gatewayPolicy;
    const before = await pins();
    for (const uri of ['svc://nope', 'nope']) {
      const pin = await q('mutation($uri: String!) { pinNplPolicy(uri: $uri) }', { uri });
      expect(invalidFields(pin)).toEqual(['uri']);
      expect(pin.errors?.[0]?.message).toContain(`malformed policy URI "${uri}"`);
      expect(pin.errors?.[0]?.message).toContain('expected svc://name@semver');
      expect(pin.errors?.[0]?.message).not.toContain('not published');
      const update = await q(
        `mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) {
          __typename ... on GatewayPolicyValidationError { issues { field message } } } }`,
        { i: { pinnedPolicies: [uri] } },
      );
      expect(update.data?.updateGatewayPolicy.issues).toEqual([
        {
          field: 'pinnedPolicies[0]',
          message: expect.stringContaining('expected svc://name@semver'),
        },
      ]);
    }
    expect(await pins()).toEqual(before);
  });

  it('mcp servers: mockResults is a JSON object', async () => {
    const answer = await q(
      'mutation($i: RegisterMcpServerInput!) { registerMcpServer(input: $i) { id } }',
      { i: { serverId: 'mocked', url: 'http://127.0.0.1:9/', mockResults: [1] } },
    );
    expect(invalidFields(answer)).toEqual(['input.mockResults']);
    expect((await q('{ mcpServers { serverId } }')).data?.mcpServers).toEqual([]);
  });

  it('mcp servers: a malformed serverId is refused naming input.serverId', async () => {
    const answer = await q(
      'mutation($i: RegisterMcpServerInput!) { registerMcpServer(input: $i) { id } }',
      { i: { serverId: '-no spaces-', url: 'http://127.0.0.1:9/' } },
    );
    expect(invalidFields(answer)).toEqual(['input.serverId']);
    expect((await q('{ mcpServers { serverId } }')).data?.mcpServers).toEqual([]);
  });

  it('audit trail: a range whose from is after its to is refused', async () => {
    const range = { from: '2030-01-02T00:00:00Z', to: '2030-01-01T00:00:00Z' };
    const list = await q(
      'query($from: DateTime, $to: DateTime) { auditTrail(from: $from, to: $to) { edges { cursor } } }',
      range,
    );
    expect(invalidFields(list)).toEqual(['from']);
    const verify = await q(
      'query($from: DateTime, $to: DateTime) { verifyAuditTrail(from: $from, to: $to) { ok } }',
      range,
    );
    expect(invalidFields(verify)).toEqual(['from']);
  });

  it('a DateTime that is not RFC 3339 with a zone is REQUEST_INVALID, in a variable or inline', async () => {
    for (const value of ['yesterday', '2030-01-01', '2030-01-01T00:00:00']) {
      const variable = await q('query($to: DateTime) { verifyAuditTrail(to: $to) { ok } }', {
        to: value,
      });
      expect(errorCodes(variable)).toEqual(['REQUEST_INVALID']);
      const inline = await q(`{ verifyAuditTrail(to: "${value}") { ok } }`);
      expect(errorCodes(inline)).toEqual(['REQUEST_INVALID']);
    }
    const answer = await q('{ verifyAuditTrail(to: "2030-01-01T00:00:00+01:00") { ok } }');
    expect(answer.errors).toBeUndefined();
  });

  it('DateTime answers are UTC ISO 8601 strings with milliseconds', async () => {
    const answer = await q('{ me { tenant { createdAt } } }');
    expect(answer.data?.me.tenant.createdAt).toMatch(
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
    );
  });
});
