// Registering OAuth clients (RFC 7591) through POST /oauth/register and the registerOAuthClient
// mutation, over real HTTP, on PGlite and PostgreSQL: the answer carries the RFC's fields and the
// secret once; the database keeps only its SHA-256; the in-process data plane has the client in
// its snapshot before the answer; the registration is audited without the secret. Revocation
// (revokeOAuthClient) takes the client out of the snapshot, once, audited; listing is
// tenant-isolated and never shows a secret or its hash.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../../support/databases.js';
import { errorCodes, graphql, type Loose } from '../graphql/support.js';
import { type OAuthTestGateway, startOAuthTestGateway } from './support.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const CLIENT_FIELDS = `id name agentId tokenEndpointAuthMethod hasSecret grantTypes redirectUris
  resources createdAt revokedAt`;

describeEachDatabase('registering OAuth clients', (kind) => {
  let gateway: OAuthTestGateway;
  beforeAll(async () => {
    gateway = await startOAuthTestGateway(kind);
  }, 60_000);
  afterAll(() => gateway?.close());

  const snapshotClients = () =>
    gateway.runtime.store.current?.tenants.get(gateway.tenant.id)?.source.oauthClients ?? [];

  it('answers 201 with client_id, the secret once and the registered metadata; stores only its hash; the data plane knows the client before the answer', async () => {
    const before = Math.floor(Date.now() / 1000);
    const configVersion = async () =>
      (await gateway.db.prisma.tenant.findUniqueOrThrow({ where: { id: gateway.tenant.id } }))
        .configVersion;
    const versionBefore = await configVersion();
    const answer = await gateway.register({
      agent_id: gateway.agentId,
      client_name: 'nightly reports',
      redirect_uris: ['https://app.example/callback', 'http://127.0.0.1:8123/cb'],
      // Metadata this server does not understand is ignored (RFC 7591 §2).
      software_id: 'reports-1',
      logo_uri: 'https://app.example/logo.png',
    });
    expect(answer.status).toBe(201);
    expect(answer.cacheControl).toBe('no-store');
    expect(answer.body).toEqual({
      client_id: expect.stringMatching(/^agc_[A-Za-z0-9_-]{22}$/),
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      client_id_issued_at: expect.any(Number),
      client_secret_expires_at: 0,
      client_name: 'nightly reports',
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: ['https://app.example/callback', 'http://127.0.0.1:8123/cb'],
      agent_id: gateway.agentId,
      resources: ['mcp://files', 'mcp://mail'],
    });
    const { client_id: clientId, client_secret: secret } = answer.body;
    expect(answer.body.client_id_issued_at).toBeGreaterThanOrEqual(before);
    expect(answer.body.client_id_issued_at).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));

    const row = await gateway.db.prisma.oAuthClient.findUniqueOrThrow({ where: { id: clientId } });
    expect(row).toMatchObject({
      tenantId: gateway.tenant.id,
      agentId: gateway.agentId,
      name: 'nightly reports',
      secretHash: sha256(secret),
      authMethod: 'client_secret_basic',
      grantTypes: ['client_credentials'],
      audiences: ['mcp://files', 'mcp://mail'],
      revokedAt: null,
    });
    // The secret is nowhere in clear: not in the row, not in the audit trail.
    const stored = JSON.stringify(
      await gateway.db.query('select * from oauth_clients where id = $1', [clientId]),
    );
    expect(stored).not.toContain(secret);
    const entries = await gateway.db.prisma.auditEntry.findMany({
      where: { tenantId: gateway.tenant.id, action: 'oauth.client_registered' },
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ resourceType: 'oauth_client', resourceId: clientId });
    expect(entries[0]?.metadata).toMatchObject({
      actorType: 'operator',
      actor: expect.stringMatching(/^api_key:/),
      agentId: gateway.agentId,
      authMethod: 'client_secret_basic',
      audiences: ['mcp://files', 'mcp://mail'],
    });
    const audited = JSON.stringify(entries.map((entry) => entry.metadata));
    expect(audited).not.toContain(secret);
    expect(audited).not.toContain(sha256(secret));

    // One configuration change, published before the answer: the data plane's token endpoint
    // can authenticate the client now.
    expect(await configVersion()).toBe(versionBefore + 1);
    expect(snapshotClients()).toContainEqual({
      id: clientId,
      agentId: gateway.agentId,
      secretHash: sha256(secret),
      authMethod: 'client_secret_basic',
      grantTypes: ['client_credentials'],
      audiences: ['mcp://files', 'mcp://mail'],
      redirectUris: ['https://app.example/callback', 'http://127.0.0.1:8123/cb'],
    });
  });

  it("defaults client_name to the agent's name; takes client_secret_post and a subset of the agent's audiences", async () => {
    const answer = await gateway.register({
      agent_id: gateway.agentId,
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_post',
      resources: ['mcp://mail'],
      response_types: [],
    });
    expect(answer.status).toBe(201);
    const agent = await gateway.db.prisma.agent.findUniqueOrThrow({
      where: { id: gateway.agentId },
    });
    expect(answer.body).toMatchObject({
      client_name: agent.name,
      token_endpoint_auth_method: 'client_secret_post',
      resources: ['mcp://mail'],
      redirect_uris: [],
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
  });

  it('issues no secret to a private_key_jwt client (it signs with the agent key)', async () => {
    const answer = await gateway.register({
      agent_id: gateway.agentId,
      token_endpoint_auth_method: 'private_key_jwt',
    });
    expect(answer.status).toBe(201);
    expect(answer.body.token_endpoint_auth_method).toBe('private_key_jwt');
    expect(answer.body).not.toHaveProperty('client_secret');
    expect(answer.body).not.toHaveProperty('client_secret_expires_at');
    const row = await gateway.db.prisma.oAuthClient.findUniqueOrThrow({
      where: { id: answer.body.client_id },
    });
    expect(row.secretHash).toBeNull();
    expect(snapshotClients()).toContainEqual(
      expect.objectContaining({
        id: answer.body.client_id,
        secretHash: null,
        authMethod: 'private_key_jwt',
      }),
    );
  });

  it('registers the authorization_code grant with its redirect URIs and response type code', async () => {
    const answer = await gateway.register({
      agent_id: gateway.agentId,
      grant_types: ['authorization_code', 'client_credentials'],
      redirect_uris: ['https://app.example/cb', 'http://127.0.0.1:8765/cb'],
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      grant_types: ['authorization_code', 'client_credentials'],
      response_types: ['code'],
      redirect_uris: ['https://app.example/cb', 'http://127.0.0.1:8765/cb'],
    });
    expect(snapshotClients()).toContainEqual(
      expect.objectContaining({
        id: answer.body.client_id,
        grantTypes: ['authorization_code', 'client_credentials'],
      }),
    );
  });

  it('takes redirect URIs in canonical form, and an origin without its root path, as written', async () => {
    const uris = ['https://app.example', 'http://[::1]:8765/cb?x=1', 'https://app.example/%7Ecb'];
    const answer = await gateway.register({
      agent_id: gateway.agentId,
      grant_types: ['authorization_code'],
      redirect_uris: uris,
    });
    expect(answer.status).toBe(201);
    expect(answer.body.redirect_uris).toEqual(uris);
  });

  it('two registrations get different ids and secrets', async () => {
    const [a, b] = await Promise.all([
      gateway.register({ agent_id: gateway.agentId }),
      gateway.register({ agent_id: gateway.agentId }),
    ]);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.client_id).not.toBe(b.body.client_id);
    expect(a.body.client_secret).not.toBe(b.body.client_secret);
  });

  describe('through GraphQL', () => {
    let clientId: string;

    it('registerOAuthClient returns the client and its secret once; no field reads it back', async () => {
      const answer = await graphql<Loose>(
        gateway.url,
        gateway.managerKey,
        `mutation ($input: RegisterOAuthClientInput!) {
          registerOAuthClient(input: $input) { clientSecret client { ${CLIENT_FIELDS} } }
        }`,
        {
          input: {
            agentId: gateway.agentId,
            clientName: 'from graphql',
            tokenEndpointAuthMethod: 'CLIENT_SECRET_BASIC',
            redirectUris: ['http://localhost:3000/cb'],
            resources: ['mcp://files'],
            scope: 'read write',
          },
        },
      );
      expect(answer.errors).toBeUndefined();
      const { client, clientSecret } = answer.data.registerOAuthClient;
      expect(clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(client).toMatchObject({
        id: expect.stringMatching(/^agc_/),
        name: 'from graphql',
        agentId: gateway.agentId,
        tokenEndpointAuthMethod: 'CLIENT_SECRET_BASIC',
        hasSecret: true,
        grantTypes: ['client_credentials'],
        redirectUris: ['http://localhost:3000/cb'],
        resources: ['mcp://files'],
        revokedAt: null,
      });
      clientId = client.id;
      const row = await gateway.db.prisma.oAuthClient.findUniqueOrThrow({
        where: { id: clientId },
      });
      expect(row.secretHash).toBe(sha256(clientSecret));
      expect(snapshotClients().map((c) => c.id)).toContain(clientId);

      const listed = await graphql<Loose>(
        gateway.url,
        gateway.managerKey,
        `query { oauthClients(first: 100) { edges { node { ${CLIENT_FIELDS} } } } }`,
      );
      expect(listed.errors).toBeUndefined();
      const nodes = listed.data.oauthClients.edges.map((edge: Loose) => edge.node);
      expect(nodes.map((node: Loose) => node.id)).toContain(clientId);
      expect(nodes[0].id).toBe(clientId);
      expect(JSON.stringify(listed)).not.toContain(clientSecret);
      expect(JSON.stringify(listed)).not.toContain(sha256(clientSecret));
    });

    it('revokeOAuthClient takes it out of the snapshot before answering, audited once; again changes nothing', async () => {
      const revoke = () =>
        graphql<Loose>(
          gateway.url,
          gateway.managerKey,
          `mutation ($id: ID!) { revokeOAuthClient(clientId: $id) { ${CLIENT_FIELDS} } }`,
          { id: clientId },
        );
      const first = await revoke();
      expect(first.errors).toBeUndefined();
      const revokedAt = first.data.revokeOAuthClient.revokedAt;
      expect(revokedAt).toEqual(expect.any(String));
      expect(snapshotClients().map((c) => c.id)).not.toContain(clientId);

      const again = await revoke();
      expect(again.errors).toBeUndefined();
      expect(again.data.revokeOAuthClient.revokedAt).toBe(revokedAt);
      const entries = await gateway.db.prisma.auditEntry.findMany({
        where: { tenantId: gateway.tenant.id, action: 'oauth.client_revoked' },
      });
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ resourceType: 'oauth_client', resourceId: clientId });
      expect(entries[0]?.metadata).toMatchObject({
        actorType: 'operator',
        actor: expect.stringMatching(/^api_key:/),
        agentId: gateway.agentId,
      });

      const listed = async (includeRevoked: boolean) =>
        (
          await graphql<Loose>(
            gateway.url,
            gateway.managerKey,
            'query ($r: Boolean) { oauthClients(first: 100, includeRevoked: $r) { edges { node { id revokedAt } } } }',
            { r: includeRevoked },
          )
        ).data.oauthClients.edges.map((edge: Loose) => edge.node.id);
      expect(await listed(false)).not.toContain(clientId);
      expect(await listed(true)).toContain(clientId);
    });

    it("another tenant's manager sees none of these clients and cannot revoke them", async () => {
      const other = await gateway.addTenant();
      const otherKey = await gateway.addApiKey(other.id, ['agents:manage']);
      const kept = await gateway.register({ agent_id: gateway.agentId });
      expect(kept.status).toBe(201);
      const listed = await graphql<Loose>(
        gateway.url,
        otherKey,
        'query { oauthClients(first: 100, includeRevoked: true) { edges { node { id } } } }',
      );
      expect(listed.errors).toBeUndefined();
      expect(listed.data.oauthClients.edges).toEqual([]);
      const revoke = await graphql<Loose>(
        gateway.url,
        otherKey,
        'mutation ($id: ID!) { revokeOAuthClient(clientId: $id) { id } }',
        { id: kept.body.client_id },
      );
      expect(errorCodes(revoke)).toEqual(['NOT_FOUND']);
      expect(snapshotClients().map((c) => c.id)).toContain(kept.body.client_id);
      const row = await gateway.db.prisma.oAuthClient.findUniqueOrThrow({
        where: { id: kept.body.client_id },
      });
      expect(row.revokedAt).toBeNull();
    });

    it('oauthClients and revokeOAuthClient need agents:manage', async () => {
      const executeOnly = await gateway.addApiKey(gateway.tenant.id, ['agents:execute']);
      const listed = await graphql(
        gateway.url,
        executeOnly,
        'query { oauthClients { edges { node { id } } } }',
      );
      expect(errorCodes(listed)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
      const revoke = await graphql(
        gateway.url,
        executeOnly,
        'mutation { revokeOAuthClient(clientId: "agc_xxxxxxxxxxxxxxxxxxxxxx") { id } }',
      );
      expect(errorCodes(revoke)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
    });
  });
});
