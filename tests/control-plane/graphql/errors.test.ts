// Errors reach GraphQL clients as the registry builds them: resolvers and the scope check throw
// GatewayError, and the answer carries its code, its message and the registry's hint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../shared/errors/index.js';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { graphql } from './support.js';

describe('GraphQL errors from the registry', () => {
  let gw: TestGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startTestGateway('pglite');
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
  });
  afterAll(() => gw?.close());

  it('a missing record is NOT_FOUND with the registry message and hint', async () => {
    const answer = await graphql(gw.url, admin, 'mutation { removeMcpServer(serverId: "gone") }');
    expect(answer.errors?.[0]).toMatchObject({
      message: 'no MCP server gone in this tenant',
      extensions: { code: 'NOT_FOUND', hint: ERROR_CODES.NOT_FOUND.hint },
    });
  });

  it('a missing scope is AUTH_INSUFFICIENT_SCOPE naming the scope, with the registry hint', async () => {
    const answer = await graphql(gw.url, gw.tenant.key, '{ apiKeys { id } }');
    expect(answer.errors?.[0]).toMatchObject({
      message: 'this operation needs scope keys:manage',
      extensions: {
        code: 'AUTH_INSUFFICIENT_SCOPE',
        hint: ERROR_CODES.AUTH_INSUFFICIENT_SCOPE.hint,
      },
    });
  });

  it('an input validation failure is REQUEST_INVALID with the registry hint', async () => {
    const answer = await graphql(
      gw.url,
      admin,
      'mutation { createApiKey(input: { name: "", scopes: ["audit:read"] }) { secret } }',
    );
    expect(answer.errors?.[0]?.extensions).toMatchObject({
      code: 'REQUEST_INVALID',
      hint: ERROR_CODES.REQUEST_INVALID.hint,
      issues: [{ field: 'input.name', message: expect.any(String) }],
    });
  });

  it('a value already taken is REQUEST_INVALID naming the input field, and nothing is written', async () => {
    const tenants = async () =>
      (await graphql<{ tenants: unknown[] }>(gw.url, admin, '{ tenants { id name } }')).data
        ?.tenants;
    const before = await tenants();
    const answer = await graphql(
      gw.url,
      admin,
      'mutation($i: CreateTenantInput!) { createTenant(input: $i) { apiKeyId } }',
      { i: { name: gw.tenant.name } },
    );
    expect(answer.errors?.[0]).toMatchObject({
      message: 'input.name is already taken by another Tenant',
      extensions: {
        code: 'REQUEST_INVALID',
        hint: ERROR_CODES.REQUEST_INVALID.hint,
        issues: [{ field: 'input.name', message: 'is already taken by another Tenant' }],
      },
    });
    expect(await tenants()).toEqual(before);
  });
});
