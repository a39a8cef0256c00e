// Client ID metadata documents (issue 28, §4; docs/oauth.md): a client whose client_id is the
// https URL of its metadata document, served here from a loopback HTTPS server whose CA the
// gateway is given. oauth4webapi (an independent OAuth client) drives the flow: the agent's
// identity proof at /oauth/authorize names the agent (and so the tenant), the client is recorded
// under it and audited like a registration, and the code is redeemed without client
// authentication (PKCE). Every refusal the issue names answers 400 with its own reasonCode and
// records nothing: a private address (a gateway that does not allow them), http, a redirect (not
// followed), an oversized document (not read beyond the limit), a slow one (the time limit), a
// document for another client_id, a redirect_uri it does not list; client_credentials is refused.
// A document that says private_key_jwt authenticates at the token endpoint with a key of its
// jwks_uri (fetched under the same profile): without an assertion, or with one by another key,
// it is invalid_client; a `none` document's client sending an assertion too.
import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgent } from '../../../control-plane/services/agents.js';
import {
  type Ed25519KeyMaterial,
  generateEd25519KeyMaterial,
} from '../../../shared/agentiam/ed25519-keys.js';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { graphql } from '../../control-plane/graphql/support.js';
import { issueCredential } from '../../support/agentiam-client.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import {
  type MetadataDocumentServer,
  startMetadataDocumentServer,
  TEST_CA,
} from '../../support/metadata-document-server.js';
import { signAgentProof } from './oauth-fixture.js';

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

interface Agent {
  readonly agentId: string;
  readonly key: Ed25519KeyMaterial;
  readonly credential: Record<string, unknown>;
}

describeEachDatabase('client ID metadata documents', (kind) => {
  let gateway: TestGateway;
  let strict: TestGateway;
  let documents: MetadataDocumentServer;
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    documents = await startMetadataDocumentServer();
    gateway = await startTestGateway(kind, {
      cimd: { allowPrivate: true, ca: TEST_CA, timeoutMs: 500 },
    });
    // As `npm start` runs: private addresses refused.
    strict = await startTestGateway('pglite', { cimd: { ca: TEST_CA } });
    await gateway.registerServer({
      tenantId: gateway.tenant.id,
      serverId: 'files',
      url: 'http://127.0.0.1:9/files',
    });
    const issuer = new URL(gateway.url);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await strict?.close();
    await documents?.close();
  });

  /** A document served at a path of its own, naming its own URL. */
  function document(overrides: Record<string, unknown> = {}, headers?: Record<string, string>) {
    const path = `/clients/${randomUUID()}.json`;
    const url = `${documents.origin}${path}`;
    documents.serve(
      path,
      {
        client_id: url,
        client_name: 'Metadata document client',
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        ...overrides,
      },
      headers === undefined ? {} : { headers },
    );
    return url;
  }

  async function addAgent(on = gateway): Promise<Agent> {
    const key = generateEd25519KeyMaterial();
    const { id: agentId } = await createAgent(on.db, {
      tenantId: on.tenant.id,
      name: `cimd-${randomUUID().slice(0, 8)}`,
      allowedTools: ['*'],
      mcpAudiences: ['mcp://files'],
      publicKey: key.publicKeyMultibase,
    });
    const credential = await issueCredential(on, { id: agentId as never, tenantId: on.tenant.id });
    await on.sync();
    return { agentId, key, credential };
  }

  function proof(clientId: string, agent: Agent, challenge: string, on = gateway) {
    return signAgentProof(agent.key, { clientId, issuer: on.url, codeChallenge: challenge });
  }

  async function authorize(
    clientId: string,
    agent: Agent,
    challenge: string,
    options: { redirectUri?: string; on?: TestGateway } = {},
  ) {
    const on = options.on ?? gateway;
    const url = new URL(`${on.url}/oauth/authorize`);
    const params = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: options.redirectUri ?? REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      resource: 'mcp://files',
      agent_credential: JSON.stringify(agent.credential),
      agent_proof: await proof(clientId, agent, challenge, on),
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    const response = await fetch(url, { redirect: 'manual' });
    const location = response.headers.get('location');
    return {
      status: response.status,
      location: location === null ? undefined : new URL(location),
      body: location === null ? ((await response.json()) as Record<string, unknown>) : undefined,
    };
  }

  const recorded = async (url: string, on = gateway) =>
    (
      await on.db.query<{ id: string; authMethod: string; agentId: string }>(
        `select id, "authMethod", "agentId" from oauth_clients where "metadataUrl" = $1`,
        [url],
      )
    ).map((row) => ({ ...row }));

  it('advertises client ID metadata documents', () => {
    expect(as.client_id_metadata_document_supported).toBe(true);
    expect(as.token_endpoint_auth_methods_supported).toContain('none');
  });

  it('issues a token to a document client after its agent’s identity proof, recorded under the agent and audited', async () => {
    const clientId = document({}, { 'cache-control': 'max-age=600' });
    const agent = await addAgent();
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const answer = await authorize(clientId, agent, challenge);
    expect(answer.status, JSON.stringify(answer.body)).toBe(302);
    const client = { client_id: clientId, token_endpoint_auth_method: 'none' };
    const params = oauth.validateAuthResponse(as, client, answer.location!, 'st-1');
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      REDIRECT_URI,
      verifier,
      insecure,
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response);
    const claims = JSON.parse(
      Buffer.from(result.access_token.split('.')[1] as string, 'base64url').toString(),
    );
    expect(claims).toMatchObject({ sub: agent.agentId, client_id: clientId, aud: 'mcp://files' });

    const rows = await recorded(clientId);
    expect(rows).toEqual([
      { id: expect.stringMatching(/^agc_/), authMethod: 'none', agentId: agent.agentId },
    ]);
    const audited = await gateway.db.query<{ action: string }>(
      `select action from audit_entries where "resourceId" = $1`,
      [rows[0]!.id],
    );
    expect(audited.map((row) => row.action)).toEqual(['oauth.client_registered']);
    // Where operators see clients: under the agent, with its URL and no secret.
    const admin = await gateway.addApiKey(gateway.tenant.id, [...ALL_SCOPES]);
    const listed = await graphql<{
      oauthClients: { edges: { node: Record<string, unknown> }[] };
    }>(
      gateway.url,
      admin,
      `query($agentId: ID) { oauthClients(agentId: $agentId) { edges { node {
        id metadataUrl tokenEndpointAuthMethod agentId } } } }`,
      { agentId: agent.agentId },
    );
    expect(listed.errors).toBeUndefined();
    expect(listed.data?.oauthClients.edges.map((edge) => edge.node)).toEqual([
      {
        id: rows[0]!.id,
        metadataUrl: clientId,
        tokenEndpointAuthMethod: 'NONE',
        agentId: agent.agentId,
      },
    ]);

    // Cached by its max-age: a second authorization does not fetch it again.
    const fetches = documents.requested.filter((path) => clientId.endsWith(path)).length;
    const again = await authorize(clientId, agent, challenge);
    expect(again.status).toBe(302);
    expect(documents.requested.filter((path) => clientId.endsWith(path)).length).toBe(fetches);
    expect(await recorded(clientId)).toHaveLength(1);
  });

  it('authenticates a private_key_jwt document client with a key of its jwks_uri', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const jwksPath = `/jwks/${randomUUID()}.json`;
    documents.serve(jwksPath, { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1' }] });
    const clientId = document({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: `${documents.origin}${jwksPath}`,
    });
    const agent = await addAgent();
    const client = { client_id: clientId, token_endpoint_auth_method: 'private_key_jwt' };
    const redeem = async (auth: oauth.ClientAuth) => {
      const verifier = oauth.generateRandomCodeVerifier();
      const challenge = await oauth.calculatePKCECodeChallenge(verifier);
      const answer = await authorize(clientId, agent, challenge);
      expect(answer.status, JSON.stringify(answer.body)).toBe(302);
      const params = oauth.validateAuthResponse(as, client, answer.location!, 'st-1');
      return oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        REDIRECT_URI,
        verifier,
        insecure,
      );
    };
    const signing = (key: KeyObject) =>
      crypto.subtle.importKey('jwk', key.export({ format: 'jwk' }), { name: 'Ed25519' }, false, [
        'sign',
      ]);
    const granted = await redeem(
      oauth.PrivateKeyJwt({ key: await signing(privateKey), kid: 'k1' }),
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, granted);
    expect(result.access_token).toEqual(expect.any(String));
    expect(documents.requested).toContain(jwksPath);
    expect((await recorded(clientId))[0]?.authMethod).toBe('private_key_jwt');

    const other = generateKeyPairSync('ed25519').privateKey;
    const wrongKey = await redeem(oauth.PrivateKeyJwt({ key: await signing(other), kid: 'k1' }));
    expect(wrongKey.status).toBe(401);
    expect(await wrongKey.json()).toMatchObject({ error: 'invalid_client' });
    const none = await redeem(oauth.None());
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('refuses an assertion from a client whose document says none', async () => {
    const clientId = document();
    const response = await fetch(`${gateway.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: clientId,
        code: 'x',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: 'a.b.c',
      }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('does not offer client_credentials to a document client', async () => {
    const clientId = document();
    const response = await fetch(`${gateway.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        resource: 'mcp://files',
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'unauthorized_client' });
  });

  it.each([
    ['on a private address (the default profile)', 'private'],
    ['over http', 'http'],
    ['that redirects', 'redirect'],
    ['that is oversized', 'large'],
    ['that is slow', 'slow'],
    ['for another client_id', 'mismatch'],
    ['with a client secret', 'secret'],
  ] as const)(
    'refuses a document %s with its own reasonCode, recording nothing',
    async (_case, variant) => {
      const agent = await addAgent(variant === 'private' ? strict : gateway);
      let clientId = document();
      let expected = '';
      let flood: ReturnType<MetadataDocumentServer['flood']> | undefined;
      let on = gateway;
      switch (variant) {
        case 'private':
          on = strict;
          expected = 'CIMD_ADDRESS_FORBIDDEN';
          break;
        case 'http':
          clientId = clientId.replace('https://', 'http://');
          expected = 'CIMD_NOT_HTTPS';
          break;
        case 'redirect': {
          const target = document();
          clientId = `${documents.origin}/moved/${randomUUID()}.json`;
          documents.serve(new URL(clientId).pathname, '', {
            status: 302,
            headers: { location: target },
          });
          expected = 'CIMD_REDIRECT_REFUSED';
          break;
        }
        case 'large':
          flood = documents.flood(`/large/${randomUUID()}.json`, 1024 * 1024);
          clientId = flood.url;
          expected = 'CIMD_DOCUMENT_TOO_LARGE';
          break;
        case 'slow':
          clientId = documents.hang(`/slow/${randomUUID()}.json`);
          expected = 'CIMD_FETCH_TIMEOUT';
          break;
        case 'mismatch':
          clientId = document({ client_id: `${documents.origin}/someone-else.json` });
          expected = 'CIMD_DOCUMENT_INVALID';
          break;
        case 'secret':
          clientId = document({ client_secret: 'shh' });
          expected = 'CIMD_DOCUMENT_INVALID';
          break;
      }
      const before = documents.requested.length;
      const answer = await authorize(clientId, agent, 'a'.repeat(43), { on });
      expect(answer.status).toBe(400);
      expect(answer.location).toBeUndefined();
      expect(answer.body).toMatchObject({ error: 'invalid_client', reasonCode: expected });
      expect(await recorded(clientId, on)).toEqual([]);
      if (variant === 'private' || variant === 'http') {
        expect(documents.requested.length).toBe(before);
      }
      if (variant === 'redirect') {
        // The redirect's target was not requested.
        expect(documents.requested.slice(before)).toEqual([new URL(clientId).pathname]);
      }
      if (variant === 'large') {
        // Not read beyond the limit: the gateway hung up before the server wrote it all.
        await expect.poll(() => flood!.completed(), { timeout: 30_000, interval: 20 }).toBe(false);
      }
    },
  );

  it('refuses a redirect_uri the document does not list, before anything is issued', async () => {
    const clientId = document();
    const agent = await addAgent();
    const answer = await authorize(clientId, agent, 'a'.repeat(43), {
      redirectUri: 'http://127.0.0.1:8765/elsewhere',
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'invalid_request' });
    expect(answer.body?.error_description).toContain('redirect_uris');
    expect(await recorded(clientId)).toEqual([]);
  });
});
