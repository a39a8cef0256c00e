// The authorization server as an off-the-shelf OAuth client drives it: oauth4webapi discovers the
// gateway (RFC 8414), obtains tokens with client_credentials under each client authentication
// method, introspects (RFC 7662) and revokes (RFC 7009) them; jose verifies the tokens against the
// discovered JWKS.

import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { addClient } from './oauth-fixture.js';

describeEachDatabase(
  'the authorization server with an independent client (oauth4webapi)',
  (kind) => {
    let gateway: TestGateway;
    let as: oauth.AuthorizationServer;
    const insecure = { [oauth.allowInsecureRequests]: true } as const;
    beforeAll(async () => {
      gateway = await startTestGateway(kind);
      const issuer = new URL(gateway.url);
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
      );
    });
    afterAll(async () => {
      await gateway?.close();
    });

    async function verifyFromDiscoveredJwks(token: string, resource: string) {
      const jwks = createRemoteJWKSet(new URL(as.jwks_uri as string));
      const { payload } = await jwtVerify(token, jwks, {
        issuer: as.issuer,
        audience: resource,
        typ: 'at+jwt',
        algorithms: ['EdDSA'],
      });
      return payload;
    }

    it('discovers the endpoints this slice serves', () => {
      expect(as).toMatchObject({
        issuer: gateway.url,
        token_endpoint: `${gateway.url}/oauth/token`,
        introspection_endpoint: `${gateway.url}/oauth/introspect`,
        revocation_endpoint: `${gateway.url}/oauth/revoke`,
        jwks_uri: `${gateway.url}/oauth/jwks`,
        authorization_endpoint: `${gateway.url}/oauth/authorize`,
        grant_types_supported: ['client_credentials', 'authorization_code'],
        code_challenge_methods_supported: ['S256'],
      });
    });

    it('client_credentials with client_secret_basic, introspection, revocation', async () => {
      const registered = await addClient(gateway);
      const client: oauth.Client = { client_id: registered.clientId };
      const auth = oauth.ClientSecretBasic(registered.secret!);
      const response = await oauth.processClientCredentialsResponse(
        as,
        client,
        await oauth.clientCredentialsGrantRequest(
          as,
          client,
          auth,
          { resource: 'mcp://files' },
          insecure,
        ),
      );
      expect(response.token_type).toBe('bearer');
      expect(response.expires_in).toBe(300);
      const payload = await verifyFromDiscoveredJwks(response.access_token, 'mcp://files');
      expect(payload).toMatchObject({ sub: registered.agentId, client_id: registered.clientId });

      const introspected = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, response.access_token, insecure),
      );
      expect(introspected).toMatchObject({
        active: true,
        client_id: registered.clientId,
        sub: registered.agentId,
        aud: 'mcp://files',
        jti: payload.jti,
      });

      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, auth, response.access_token, insecure),
      );
      const after = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, response.access_token, insecure),
      );
      expect(after.active).toBe(false);
    });

    it('client_credentials with client_secret_post', async () => {
      const registered = await addClient(gateway);
      const client: oauth.Client = { client_id: registered.clientId };
      const response = await oauth.processClientCredentialsResponse(
        as,
        client,
        await oauth.clientCredentialsGrantRequest(
          as,
          client,
          oauth.ClientSecretPost(registered.secret!),
          { resource: `${gateway.url}/mcp/other` },
          insecure,
        ),
      );
      await verifyFromDiscoveredJwks(response.access_token, `${gateway.url}/mcp/other`);
    });

    it('client_credentials with private_key_jwt signed by the agent key', async () => {
      const registered = await addClient(gateway, { authMethod: 'private_key_jwt' });
      const client: oauth.Client = { client_id: registered.clientId };
      const key = {
        key: await crypto.subtle.importKey(
          'jwk',
          registered.agentKey.export({ format: 'jwk' }),
          { name: 'Ed25519' },
          false,
          ['sign'],
        ),
      };
      const response = await oauth.processClientCredentialsResponse(
        as,
        client,
        await oauth.clientCredentialsGrantRequest(
          as,
          client,
          oauth.PrivateKeyJwt(key),
          { resource: 'mcp://files' },
          insecure,
        ),
      );
      const payload = await verifyFromDiscoveredJwks(response.access_token, 'mcp://files');
      expect(payload.client_id).toBe(registered.clientId);
    });

    it('reads the refusals as RFC 6749 errors', async () => {
      const registered = await addClient(gateway);
      const client: oauth.Client = { client_id: registered.clientId };
      const wrongSecret = oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic('A'.repeat(43)),
        { resource: 'mcp://files' },
        insecure,
      );
      // A 401 with a WWW-Authenticate challenge is how oauth4webapi reports invalid_client.
      const refused = await oauth
        .processClientCredentialsResponse(as, client, await wrongSecret)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      expect(refused).toMatchObject({
        status: 401,
        cause: [{ scheme: 'basic', parameters: { realm: 'agent-gateway' } }],
      });
      const foreign = oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(registered.secret!),
        { resource: 'mcp://ghost' },
        insecure,
      );
      await expect(
        oauth.processClientCredentialsResponse(as, client, await foreign),
      ).rejects.toMatchObject({ error: 'invalid_target', status: 400 });
    });
  },
);
