// createAgent and updateAgent obey one set of agent rules (shared/agents/agent-rules.ts): a
// public key is an Ed25519 key in the z6Mk… form, an audience is mcp://{serverId} of a server
// registered in the caller's tenant, a tool name is not empty. Each wrong value is refused with
// REQUEST_INVALID naming the field, and nothing is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { errorCodes, type GraphQLAnswer, graphql, type Loose } from './support.js';

const CREATE_AGENT =
  'mutation($i: CreateAgentInput!) { createAgent(input: $i) { id publicKey mcpAudiences allowedTools } }';
const UPDATE_AGENT =
  'mutation($id: ID!, $i: UpdateAgentInput!) { updateAgent(id: $id, input: $i) { allowedTools } }';
const AGENTS =
  '{ agents(first: 100) { edges { node { id name publicKey allowedTools mcpAudiences updatedAt } } } }';

/** The one field a REQUEST_INVALID answer names, checked in its issues and its message. */
function refusedField(answer: GraphQLAnswer<unknown>): string {
  expect(errorCodes(answer)).toEqual(['REQUEST_INVALID']);
  const error = answer.errors?.[0];
  const fields = ((error?.extensions?.issues ?? []) as { field: string }[]).map((i) => i.field);
  expect(fields).toHaveLength(1);
  expect(error?.message).toContain(fields[0]);
  return fields[0] as string;
}

describe('agent rules, the same for createAgent and updateAgent', () => {
  let gw: TestGateway;
  let admin: string;
  let otherTenant: string;
  const q = (query: string, variables?: Record<string, unknown>) =>
    graphql<Record<string, Loose>>(gw.url, admin, query, variables);
  const agents = async () => (await q(AGENTS)).data?.agents.edges;
  const valid = () => ({
    name: 'ruled',
    publicKey: newAgentPublicKey(),
    allowedTools: ['read'],
    mcpAudiences: ['mcp://files'],
  });

  beforeAll(async () => {
    gw = await startTestGateway('pglite');
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
    await gw.registerServer({
      tenantId: gw.tenant.id,
      serverId: 'files',
      url: 'http://127.0.0.1:9/',
    });
    // A server registered in another tenant is not an audience of this one.
    otherTenant = (await gw.addTenant()).id;
    await gw.registerServer({
      tenantId: otherTenant,
      serverId: 'theirs',
      url: 'http://127.0.0.1:9/',
    });
  });
  afterAll(() => gw?.close());

  it('creates an agent with a real Ed25519 key, a registered audience and tool names', async () => {
    const input = valid();
    const answer = await q(CREATE_AGENT, { i: input });
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.createAgent).toMatchObject({
      publicKey: input.publicKey,
      mcpAudiences: ['mcp://files'],
      allowedTools: ['read'],
    });
    const w3cExample = await q(CREATE_AGENT, {
      i: { ...valid(), publicKey: 'z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK' },
    });
    expect(w3cExample.errors).toBeUndefined();
  });

  it.each([
    ['a public key that is not one', { publicKey: 'notakey' }, 'input.publicKey'],
    [
      'a z6Mk key one character short',
      { publicKey: 'z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2do' },
      'input.publicKey',
    ],
    [
      'a key of another type (X25519, z6LS…)',
      { publicKey: 'z6LShpNhGwSupbB7zjuivH156vhLJBDDzmQtA4BY9S94pe1K' },
      'input.publicKey',
    ],
    [
      'an audience that is not mcp://{serverId}',
      { mcpAudiences: ['bogus'] },
      'input.mcpAudiences.0',
    ],
    [
      'an audience naming no registered server',
      { mcpAudiences: ['mcp://files', 'mcp://not-registered'] },
      'input.mcpAudiences.1',
    ],
    [
      "an audience naming another tenant's server",
      { mcpAudiences: ['mcp://theirs'] },
      'input.mcpAudiences.0',
    ],
    ['an empty tool name', { allowedTools: [''] }, 'input.allowedTools.0'],
  ])('createAgent refuses %s and creates nothing', async (_name, wrong, field) => {
    const before = await agents();
    const answer = await q(CREATE_AGENT, { i: { ...valid(), ...wrong } });
    expect(refusedField(answer)).toBe(field);
    expect(answer.data?.createAgent ?? null).toBeNull();
    expect(await agents()).toEqual(before);
  });

  it('updateAgent refuses an empty tool name and changes nothing', async () => {
    const before = await agents();
    const answer = await q(UPDATE_AGENT, {
      id: gw.tenant.agentId,
      i: { allowedTools: ['read', ''] },
    });
    expect(refusedField(answer)).toBe('input.allowedTools.1');
    expect(await agents()).toEqual(before);
  });
});
