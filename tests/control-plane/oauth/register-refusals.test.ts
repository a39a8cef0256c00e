// What registration refuses, on PGlite and PostgreSQL: every bad metadata value answers 400 with
// the RFC 7591 error (invalid_redirect_uri when only redirect URIs are wrong, else
// invalid_client_metadata) naming the field, `Cache-Control: no-store`; the API key's refusals
// are the gateway's error bodies. The tenant under test gets nothing from any refusal: no client
// row, no audit entry, no configVersion bump.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../support/databases.js';
import { errorCodes, graphql, type Loose } from '../graphql/support.js';
import { type OAuthTestGateway, startOAuthTestGateway } from './support.js';

describeEachDatabase('refusing to register an OAuth client', (kind) => {
  let gateway: OAuthTestGateway;
  let tenantId: string;
  let managerKey: string;
  let agentId: string;
  let killedAgentId: string;
  let noAudienceAgentId: string;
  let legacyKeyAgentId: string;
  let executeOnlyKey: string;
  let configVersion: number;
  beforeAll(async () => {
    gateway = await startOAuthTestGateway(kind);
    // A tenant of its own: no refusal below may write anything for it.
    const tenant = await gateway.addTenant();
    tenantId = tenant.id;
    for (const serverId of ['files', 'mail', 'other']) {
      await gateway.registerServer({ tenantId, serverId, url: 'http://127.0.0.1:9/' });
    }
    managerKey = await gateway.addApiKey(tenantId, ['agents:manage']);
    executeOnlyKey = await gateway.addApiKey(tenantId, ['agents:execute']);
    agentId = await gateway.addKeyedAgent(tenantId, ['mcp://files', 'mcp://mail']);
    killedAgentId = await gateway.addKeyedAgent(tenantId, ['mcp://files']);
    await gateway.db.prisma.agent.update({
      where: { id: killedAgentId },
      data: { status: 'killed', killedAt: new Date(), killedReason: 'test' },
    });
    noAudienceAgentId = await gateway.addKeyedAgent(tenantId, []);
    // An agent whose key is not an Ed25519 z6Mk key (as the older tests create them).
    legacyKeyAgentId = await gateway.addAgent(tenantId);
    await gateway.db.prisma.agent.update({
      where: { id: legacyKeyAgentId },
      data: { mcpAudiences: ['mcp://files'] },
    });
    await gateway.sync();
    configVersion = (await gateway.db.prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } }))
      .configVersion;
  }, 60_000);
  afterAll(async () => {
    const { prisma } = gateway.db;
    expect(await prisma.oAuthClient.count({ where: { tenantId } })).toBe(0);
    expect(
      await prisma.auditEntry.count({ where: { tenantId, action: { startsWith: 'oauth.' } } }),
    ).toBe(0);
    expect((await prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } })).configVersion).toBe(
      configVersion,
    );
    expect(gateway.runtime.store.current?.tenants.get(tenantId)?.source.oauthClients).toEqual([]);
    await gateway?.close();
  });

  const valid = () => ({ agent_id: agentId });

  it.each([
    [
      'grant_types authorization_code with a response type but token',
      {
        grant_types: ['authorization_code'],
        redirect_uris: ['https://app.example/cb'],
        response_types: ['token'],
      },
      'response_types',
    ],
    [
      'grant_types with client_credentials and another',
      { grant_types: ['client_credentials', 'refresh_token'] },
      'grant_types.1',
    ],
    ['grant_types empty', { grant_types: [] }, 'grant_types'],
    ['grant_types as a string', { grant_types: 'client_credentials' }, 'grant_types'],
    [
      'token_endpoint_auth_method none',
      { token_endpoint_auth_method: 'none' },
      'token_endpoint_auth_method',
    ],
    [
      'token_endpoint_auth_method tls_client_auth',
      { token_endpoint_auth_method: 'tls_client_auth' },
      'token_endpoint_auth_method',
    ],
    ['response_types code', { response_types: ['code'] }, 'response_types'],
    ['client_name empty', { client_name: '' }, 'client_name'],
    ['client_name only spaces', { client_name: '   ' }, 'client_name'],
    ['client_name a number', { client_name: 42 }, 'client_name'],
    ['client_name too long', { client_name: 'n'.repeat(201) }, 'client_name'],
    ['scope with two spaces', { scope: 'read  write' }, 'scope'],
    ['scope with a quote', { scope: 'read "write"' }, 'scope'],
    ['jwks', { jwks: { keys: [] } }, 'jwks'],
    ['jwks_uri', { jwks_uri: 'https://app.example/jwks' }, 'jwks_uri'],
    ['resources empty', { resources: [] }, 'resources'],
    ['resources not mcp://', { resources: ['https://files.example'] }, 'resources.0'],
    ['resources a string', { resources: 'mcp://files' }, 'resources'],
    [
      "a resource not in the agent's mcpAudiences (though registered in the tenant)",
      { resources: ['mcp://files', 'mcp://other'] },
      'resources.1',
    ],
    ['agent_id missing', { agent_id: undefined }, 'agent_id'],
    ['agent_id a number', { agent_id: 42 }, 'agent_id'],
    ['agent_id empty', { agent_id: '' }, 'agent_id'],
    ['an unknown agent', { agent_id: '00000000-0000-4000-8000-000000000000' }, 'agent_id'],
    // PostgreSQL text holds neither: refused by name, never a failed insert (500).
    ['client_name with NUL', { client_name: 'nightly\u0000reports' }, 'client_name'],
    ['client_name with a lone high surrogate', { client_name: 'a\ud800b' }, 'client_name'],
    ['client_name with a lone low surrogate', { client_name: '\udc00' }, 'client_name'],
    ['agent_id with NUL', { agent_id: '\u0000' }, 'agent_id'],
    ['scope with a lone surrogate', { scope: 'read\ud800' }, 'scope'],
    ['a resource with NUL', { resources: ['mcp://files\u0000'] }, 'resources.0'],
    ['a response type with a lone surrogate', { response_types: ['\ud800'] }, 'response_types.0'],
    [
      'redirect_uris wrong and client_name wrong',
      { redirect_uris: ['http://app.example/cb'], client_name: '' },
      'client_name',
    ],
  ])('%s: 400 invalid_client_metadata naming the field', async (_case, change, field) => {
    const answer = await gateway.register({ ...valid(), ...change }, { key: managerKey });
    expect(answer.status).toBe(400);
    expect(answer.cacheControl).toBe('no-store');
    expect(answer.body).toEqual({
      error: 'invalid_client_metadata',
      error_description: expect.stringContaining(`${field} `),
      issues: expect.arrayContaining([{ field, message: expect.any(String) }]),
      docs: 'docs/oauth.md#registering-a-client-rfc-7591',
    });
  });

  it.each([
    ['no redirect_uris', {}],
    ['an empty redirect_uris', { redirect_uris: [] }],
  ])('authorization_code with %s: 400 invalid_redirect_uri', async (_case, change) => {
    const answer = await gateway.register(
      { ...valid(), grant_types: ['authorization_code'], ...change },
      { key: managerKey },
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_redirect_uri',
      error_description:
        'redirect_uris must list at least one redirect URI for the authorization_code grant',
    });
  });

  it.each([
    ['http on a public host', 'http://app.example/cb'],
    ['a fragment', 'https://app.example/cb#top'],
    ['a relative reference', '/cb'],
    ['a custom scheme', 'com.example.app:/cb'],
    ['javascript:', 'javascript:alert(1)'],
    ['http on a host that only starts with localhost', 'http://localhost.evil.example/cb'],
    ['a non-string entry', 42],
    // Parsers disagree on these: only the WHATWG serialization of the URI itself is accepted.
    ['a backslash before userinfo', 'http://127.0.0.1\\@evil.example/'],
    ['a backslash in the path', 'https://app.example/a\\b'],
    ['userinfo', 'https://user@app.example/cb'],
    ['userinfo with a password on loopback', 'http://u:p@127.0.0.1/cb'],
    ['a hexadecimal IPv4 host', 'http://0x7f000001/cb'],
    ['a dotless decimal IPv4 host', 'http://2130706433/cb'],
    ['an octal IPv4 host', 'http://0177.0.0.1/cb'],
    ['an upper-case host', 'https://APP.example/cb'],
    ['a default port written out', 'https://app.example:443/cb'],
    ['dot segments', 'https://app.example/a/../cb'],
    ['a tab inside', 'https://app.ex\tample/cb'],
    ['a space inside', 'https://app.example/c b'],
    ['NUL', 'https://app.example/cb\u0000'],
    ['a lone surrogate', 'https://app.example/\ud800'],
  ])('a redirect URI with %s: 400 invalid_redirect_uri', async (_case, uri) => {
    const answer = await gateway.register(
      { ...valid(), redirect_uris: ['https://app.example/ok', uri] },
      { key: managerKey },
    );
    expect(answer.status).toBe(400);
    expect(answer.cacheControl).toBe('no-store');
    expect(answer.body).toMatchObject({
      error: 'invalid_redirect_uri',
      error_description: expect.stringContaining('redirect_uris.1 '),
      issues: [{ field: 'redirect_uris.1', message: expect.any(String) }],
    });
  });

  it('redirect_uris not an array: 400 invalid_redirect_uri, one issue', async () => {
    const answer = await gateway.register(
      { ...valid(), redirect_uris: 'https://app.example/a-string-longer-than-twenty' },
      { key: managerKey },
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: 'invalid_redirect_uri',
      error_description: 'redirect_uris must be an array, not a string',
      issues: [{ field: 'redirect_uris', message: 'must be an array, not a string' }],
      docs: 'docs/oauth.md#registering-a-client-rfc-7591',
    });
  });

  it("another tenant's agent: 400 invalid_client_metadata, as if it did not exist", async () => {
    const answer = await gateway.register({ agent_id: gateway.agentId }, { key: managerKey });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_client_metadata',
      error_description: `agent_id names no agent of this tenant (${gateway.agentId})`,
    });
    // Nor was anything written for the agent's own tenant.
    expect(await gateway.db.prisma.oAuthClient.count({ where: { agentId: gateway.agentId } })).toBe(
      0,
    );
  });

  it('a killed agent: 400 invalid_client_metadata', async () => {
    const answer = await gateway.register({ agent_id: killedAgentId }, { key: managerKey });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_client_metadata',
      error_description: `agent_id names agent ${killedAgentId}, which is killed`,
    });
  });

  it('an agent without mcpAudiences and no resources: 400 invalid_client_metadata', async () => {
    const answer = await gateway.register({ agent_id: noAudienceAgentId }, { key: managerKey });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_client_metadata',
      error_description: expect.stringContaining('resources must be given'),
    });
  });

  it('private_key_jwt for an agent without an Ed25519 key: 400 invalid_client_metadata', async () => {
    const answer = await gateway.register(
      { agent_id: legacyKeyAgentId, token_endpoint_auth_method: 'private_key_jwt' },
      { key: managerKey },
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_client_metadata',
      error_description: expect.stringContaining('token_endpoint_auth_method cannot be'),
    });
  });

  it.each([
    ['not JSON', '{"agent_id": '],
    ['empty', ''],
    ['a JSON array', '[]'],
    ['a JSON string', '"register"'],
    ['JSON null', 'null'],
  ])('a body that is %s: 400 invalid_client_metadata', async (_case, body) => {
    const answer = await gateway.register(body, { key: managerKey });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_client_metadata');
    expect(answer.body.error_description).toEqual(expect.any(String));
  });

  it('a text/plain body: 415 REQUEST_UNSUPPORTED_MEDIA_TYPE', async () => {
    const answer = await gateway.register(JSON.stringify(valid()), {
      key: managerKey,
      contentType: 'text/plain',
    });
    expect(answer.status).toBe(415);
    expect(answer.body.reasonCode).toBe('REQUEST_UNSUPPORTED_MEDIA_TYPE');
  });

  it('no API key: 401 AUTH_INVALID_API_KEY, before the body is read', async () => {
    const answer = await gateway.register('{"agent_id": ', { key: null });
    expect(answer.status).toBe(401);
    expect(answer.body.reasonCode).toBe('AUTH_INVALID_API_KEY');
  });

  it('a key without agents:manage: 403 AUTH_INSUFFICIENT_SCOPE', async () => {
    const answer = await gateway.register(valid(), { key: executeOnlyKey });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({
      reasonCode: 'AUTH_INSUFFICIENT_SCOPE',
      requiredScope: 'agents:manage',
    });
  });

  const REGISTER = `mutation ($input: RegisterOAuthClientInput!) {
    registerOAuthClient(input: $input) { clientSecret client { id } }
  }`;

  it.each([
    [
      'a public http redirect URI',
      { redirectUris: ['http://app.example/cb'] },
      'invalid_redirect_uri',
      'redirect_uris.0',
    ],
    [
      'authorization_code without redirect URIs',
      { grantTypes: ['authorization_code'] },
      'invalid_redirect_uri',
      'redirect_uris',
    ],
    [
      'an unknown grant type',
      { grantTypes: ['implicit'] },
      'invalid_client_metadata',
      'grant_types.0',
    ],
    [
      'a resource outside the agent audiences',
      { resources: ['mcp://other'] },
      'invalid_client_metadata',
      'resources.0',
    ],
    ['an empty client name', { clientName: '' }, 'invalid_client_metadata', 'client_name'],
    [
      'a backslash redirect URI',
      { redirectUris: ['http://127.0.0.1\\@evil.example/'] },
      'invalid_redirect_uri',
      'redirect_uris.0',
    ],
    [
      'a redirect URI with userinfo',
      { redirectUris: ['https://user@app.example/cb'] },
      'invalid_redirect_uri',
      'redirect_uris.0',
    ],
    [
      'a hexadecimal IPv4 redirect host',
      { redirectUris: ['http://0x7f000001/cb'] },
      'invalid_redirect_uri',
      'redirect_uris.0',
    ],
  ])(
    'GraphQL with %s: OAUTH_INVALID_REQUEST carrying the RFC 7591 error',
    async (_case, change, oauthError, field) => {
      const answer = await graphql<Loose>(gateway.url, managerKey, REGISTER, {
        input: { agentId, ...change },
      });
      expect(errorCodes(answer)).toEqual(['OAUTH_INVALID_REQUEST']);
      const [error] = answer.errors ?? [];
      expect(error?.message).toContain(`${field} `);
      expect(error?.extensions?.details).toEqual({ oauthError });
    },
  );

  it('GraphQL for a foreign, unknown or killed agent: OAUTH_INVALID_REQUEST naming agent_id', async () => {
    for (const id of [gateway.agentId, '00000000-0000-4000-8000-000000000000', killedAgentId]) {
      const answer = await graphql<Loose>(gateway.url, managerKey, REGISTER, {
        input: { agentId: id },
      });
      expect(errorCodes(answer)).toEqual(['OAUTH_INVALID_REQUEST']);
      expect(answer.errors?.[0]?.message).toContain('agent_id names');
    }
  });

  it('GraphQL with an unknown tokenEndpointAuthMethod: REQUEST_INVALID; without agents:manage: AUTH_INSUFFICIENT_SCOPE', async () => {
    const badEnum = await graphql(gateway.url, managerKey, REGISTER, {
      input: { agentId, tokenEndpointAuthMethod: 'NONE' },
    });
    expect(errorCodes(badEnum)).toEqual(['REQUEST_INVALID']);
    const refused = await graphql(gateway.url, executeOnlyKey, REGISTER, { input: { agentId } });
    expect(errorCodes(refused)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
  });
});
