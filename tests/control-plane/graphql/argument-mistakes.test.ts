// A client's mistakes in GraphQL arguments are REQUEST_INVALID naming the argument, never the
// masked INTERNAL_ERROR: a required input field missing from a variable, a negative `first`, a
// cursor that is not one, and any string argument (literal, variable or inside a cursor) holding
// NUL or an unpaired surrogate. Nothing is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../shared/errors/index.js';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { type GraphQLAnswer, graphql } from './support.js';

function expectInvalid(answer: GraphQLAnswer<unknown>, field: string): void {
  expect(answer.status).toBe(200);
  expect(answer.errors).toHaveLength(1);
  expect(answer.errors?.[0]?.extensions).toMatchObject({
    code: 'REQUEST_INVALID',
    hint: ERROR_CODES.REQUEST_INVALID.hint,
    issues: [{ field, message: expect.any(String) }],
  });
}

describe('GraphQL argument mistakes', () => {
  let gw: TestGateway;
  let admin: string;
  const tenantCount = async () =>
    (await graphql<{ tenants: unknown[] }>(gw.url, admin, '{ tenants { id } }')).data?.tenants
      .length;
  beforeAll(async () => {
    gw = await startTestGateway('pglite');
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
  });
  afterAll(() => gw?.close());

  it('a required input field missing from the variables names it', async () => {
    const before = await tenantCount();
    const answer = await graphql(
      gw.url,
      admin,
      'mutation($i: CreateTenantInput!) { createTenant(input: $i) { apiKeyId } }',
      { i: {} },
    );
    expectInvalid(answer, '$i.name');
    expect(await tenantCount()).toBe(before);
  });

  it('a negative first names the argument', async () => {
    expectInvalid(
      await graphql(gw.url, admin, '{ agents(first: -1) { edges { cursor } } }'),
      'agents.first',
    );
    expectInvalid(
      await graphql(gw.url, admin, 'query($n: Int) { approvals(first: $n) { edges { cursor } } }', {
        n: -5,
      }),
      'approvals.first',
    );
  });

  it('a malformed cursor names the argument', async () => {
    expectInvalid(
      await graphql(gw.url, admin, '{ agents(after: "nope") { edges { cursor } } }'),
      'agents.after',
    );
    const cursor = Buffer.from('GPC:{"not":"a cursor"').toString('base64');
    expectInvalid(
      await graphql(gw.url, admin, `{ auditTrail(after: "${cursor}") { edges { cursor } } }`),
      'auditTrail.after',
    );
  });

  it('text holding NUL or an unpaired surrogate names the argument, wherever it is', async () => {
    const byId = 'query($id: ID!) { agent(id: $id) { id } }';
    expectInvalid(await graphql(gw.url, admin, byId, { id: 'a\u0000b' }), 'agent.id');
    expectInvalid(await graphql(gw.url, admin, byId, { id: '\udc00' }), 'agent.id');
    expectInvalid(await graphql(gw.url, admin, '{ agent(id: "a\\u0000b") { id } }'), 'agent.id');
    const before = await tenantCount();
    expectInvalid(
      await graphql(
        gw.url,
        admin,
        'mutation($i: CreateTenantInput!) { createTenant(input: $i) { apiKeyId } }',
        { i: { name: 'x\u0000' } },
      ),
      'createTenant.input.name',
    );
    expect(await tenantCount()).toBe(before);
    const page = await graphql<{ agents: { edges: { cursor: string }[] } }>(
      gw.url,
      admin,
      '{ agents(first: 1) { edges { cursor } } }',
    );
    const valid = page.data?.agents.edges[0]?.cursor as string;
    const decoded = Buffer.from(valid, 'base64').toString('utf8');
    const poisoned = Buffer.from(
      decoded.replace(/"$/, '\\u0000"').replace(/([^"\\])$/, '$1\u0000'),
    ).toString('base64');
    expectInvalid(
      await graphql(gw.url, admin, `{ agents(after: "${poisoned}") { edges { cursor } } }`),
      'agents.after',
    );
  });
});
