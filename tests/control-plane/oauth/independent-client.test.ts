// Registration as an off-the-shelf OAuth client performs it: oauth4webapi discovers the gateway
// (RFC 8414), registers a client at the advertised registration_endpoint with the API key as
// its initial access token (RFC 7591 §3), and reads the answer and the refusals as the RFC
// defines them.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../support/databases.js';
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
    expect(grant).toMatchObject({ status: 400, error: 'invalid_client_metadata' });
  });
});
