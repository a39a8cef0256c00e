// Registration as an off-the-shelf OAuth client performs it: oauth4webapi discovers the gateway
// (RFC 8414), registers a client at the advertised registration_endpoint with the API key as
// its initial access token (RFC 7591 §3), and reads the answer and the refusals as the RFC
// defines them. The client it registered gets a token at once (the snapshot was applied before
// the answer), verified by jose from the discovered JWKS; once revoked, it gets none.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../support/databases.js';
import { errorCodes, graphql } from '../graphql/support.js';
import { type OAuthTestGateway, startOAuthTestGateway } from './support.js';

describeEachDatabase('registration with an independent OAuth client (oauth4webapi)', (kind) => {
  let gateway: OAuthTestGateway;
  let as: oauth.AuthorizationServer;
  const insecure = { [oauth.allowInsecureRequests]: true } as const;
  beforeAll(async () => {
    gateway = await startOAuthTestGateway(kind);
    const issuer = new URL(gateway.url);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  }, 60_000);
  afterAll(() => gateway?.close());

  it('discovers the registration endpoint and registers a client_secret_basic client', async () => {
    expect(as.registration_endpoint).toBe(`${gateway.url}/oauth/register`);
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: 'oauth4webapi',
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'client_secret_basic',
        agent_id: gateway.agentId,
        resources: ['mcp://files'],
      },
      { initialAccessToken: gateway.managerKey, ...insecure },
    );
    const client = await oauth.processDynamicClientRegistrationResponse(response);
    expect(client).toMatchObject({
      client_id: expect.stringMatching(/^agc_/),
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      client_secret_expires_at: 0,
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
      resources: ['mcp://files'],
    });
    const row = await gateway.db.prisma.oAuthClient.findUniqueOrThrow({
      where: { id: client.client_id },
    });
    expect(row.agentId).toBe(gateway.agentId);

    // The token endpoint knows the client as soon as registration answered.
    const secret = client.client_secret as string;
    const tokenRequest = () =>
      oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(secret),
        { resource: 'mcp://files' },
        insecure,
      );
    const tokens = await oauth.processClientCredentialsResponse(as, client, await tokenRequest());
    const jwks = createRemoteJWKSet(new URL(as.jwks_uri as string));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
      issuer: as.issuer,
      audience: 'mcp://files',
      algorithms: ['EdDSA'],
      typ: 'at+jwt',
    });
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(payload).toMatchObject({ sub: gateway.agentId, client_id: client.client_id });

    // Revoked: the snapshot without it is applied before the mutation answers.
    const revoked = await graphql(
      gateway.url,
      gateway.managerKey,
      'mutation ($id: ID!) { revokeOAuthClient(clientId: $id) { revokedAt } }',
      { id: client.client_id },
    );
    expect(errorCodes(revoked)).toEqual([]);
    const refused = await oauth
      .processClientCredentialsResponse(as, client, await tokenRequest())
      .then(
        () => expect.unreachable('a revoked client got a token'),
        (error: unknown) => error,
      );
    // 401 with a Basic challenge (RFC 6749 §5.2), which oauth4webapi reports as such.
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = refused as oauth.WWWAuthenticateChallengeError;
    expect(challenge.status).toBe(401);
    expect(challenge.cause.map((c) => c.scheme)).toEqual(['basic']);
    expect(await challenge.response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('reads a refusal as an RFC 7591 error (invalid_redirect_uri, invalid_client_metadata)', async () => {
    const refused = async (metadata: Record<string, unknown>) => {
      const response = await oauth.dynamicClientRegistrationRequest(
        as,
        { agent_id: gateway.agentId, ...metadata },
        { initialAccessToken: gateway.managerKey, ...insecure },
      );
      return oauth.processDynamicClientRegistrationResponse(response).then(
        () => expect.unreachable('registered'),
        (error: unknown) => error,
      );
    };
    const redirect = await refused({ redirect_uris: ['http://app.example/cb'] });
    expect(redirect).toBeInstanceOf(oauth.ResponseBodyError);
    expect(redirect).toMatchObject({ status: 400, error: 'invalid_redirect_uri' });
    const grant = await refused({ grant_types: ['authorization_code'] });
    expect(grant).toMatchObject({ status: 400, error: 'invalid_redirect_uri' });
    const implicit = await refused({ grant_types: ['implicit'] });
    expect(implicit).toMatchObject({ status: 400, error: 'invalid_client_metadata' });
  });
});
