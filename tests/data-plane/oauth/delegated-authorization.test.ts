// The authorization_code grant for a delegate (docs/oauth.md): the calling agent C authorizes
// with the root agent A's identity credential, the delegation chain A → B → C and a proof by its
// own key; the token's sub is C and its RFC 8693 `act` names B, then A. A chain that ends at
// another agent than the client's, or that widens the tools, is access_denied and issues nothing.
import { randomUUID } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgent } from '../../../control-plane/services/agents.js';
import { actorClaimOf } from '../../../data-plane/routes/oauth/token.js';
import {
  type Ed25519KeyMaterial,
  generateEd25519KeyMaterial,
} from '../../../shared/agentiam/ed25519-keys.js';
import { asAgentId } from '../../../shared/ids.js';
import { delegate, issueCredential, type KeyedAgent } from '../../support/agentiam-client.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { basic, issuedCount, postForm, registerClientOf, signAgentProof } from './oauth-fixture.js';

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';
const FILES = 'mcp://files';

it('act names the delegators, the nearest outermost; none without delegation', () => {
  expect(actorClaimOf([])).toBeUndefined();
  expect(actorClaimOf(['c'])).toBeUndefined();
  expect(actorClaimOf(['a', 'b', 'c'])).toEqual({ sub: 'b', act: { sub: 'a' } });
});

describeEachDatabase('the authorization_code grant for a delegate (RFC 8693 act)', (kind) => {
  let gateway: TestGateway;
  let as: oauth.AuthorizationServer;
  const insecure = { [oauth.allowInsecureRequests]: true } as const;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
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
  });

  async function keyedAgent(): Promise<KeyedAgent> {
    const key = generateEd25519KeyMaterial();
    const { id } = await createAgent(gateway.db, {
      tenantId: gateway.tenant.id,
      name: `delegate-${randomUUID().slice(0, 8)}`,
      allowedTools: ['*'],
      mcpAudiences: [FILES],
      publicKey: key.publicKeyMultibase,
    });
    return { id: asAgentId(id), tenantId: gateway.tenant.id, key };
  }

  /** A → B → C with C's client; `tools` are the two links' permitted tools. */
  async function delegation(tools: [string[], string[]] = [['read', 'write'], ['read']]) {
    const [a, b, c] = [await keyedAgent(), await keyedAgent(), await keyedAgent()];
    const { clientId, secret } = await registerClientOf(gateway, {
      tenantId: gateway.tenant.id,
      agentId: c.id,
      grantTypes: ['authorization_code'],
      redirectUris: [REDIRECT_URI],
    });
    await gateway.sync();
    const credential = await issueCredential(gateway, a);
    const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3_000_000);
    const tenantId = gateway.tenant.id;
    const chain = [
      await delegate({ tenantId, from: a, to: b, tools: tools[0], expiresAt }),
      await delegate({ tenantId, from: b, to: c, tools: tools[1], expiresAt }),
    ];
    return { a, b, c, clientId, secret: secret!, credential, chain };
  }

  function agentProof(clientId: string, key: Ed25519KeyMaterial, challenge: string) {
    return signAgentProof(key, { clientId, issuer: gateway.url, codeChallenge: challenge });
  }

  async function authorize(
    clientId: string,
    credential: unknown,
    chain: unknown[],
    key: Ed25519KeyMaterial,
    challenge: string,
  ) {
    const url = new URL(`${gateway.url}/oauth/authorize`);
    const params = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      resource: FILES,
      agent_credential: JSON.stringify(credential),
      delegation_chain: JSON.stringify(chain),
      agent_proof: await agentProof(clientId, key, challenge),
    };
    // POST: a chain of signed credentials is long for a query string.
    const response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
    expect(response.status).toBe(302);
    return new URL(response.headers.get('location')!);
  }

  it('C authorizes with A’s credential and the chain A → B → C: sub C, act { sub: B, act: { sub: A } }', async () => {
    const { a, b, c, clientId, secret, credential, chain } = await delegation();
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const location = await authorize(clientId, credential, chain, c.key, challenge);
    expect(location.searchParams.get('error_description')).toBeNull();
    const params = oauth.validateAuthResponse(as, { client_id: clientId }, location, 'st-1');
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      { client_id: clientId },
      oauth.ClientSecretBasic(secret),
      params,
      REDIRECT_URI,
      verifier,
      insecure,
    );
    const result = await oauth.processAuthorizationCodeResponse(
      as,
      { client_id: clientId },
      response,
    );
    const { payload } = await jwtVerify(
      result.access_token,
      createRemoteJWKSet(new URL(as.jwks_uri!)),
      { issuer: gateway.url, audience: FILES, typ: 'at+jwt', algorithms: ['EdDSA'] },
    );
    expect(payload.sub).toBe(c.id);
    expect(payload.client_id).toBe(clientId);
    expect(payload.act).toEqual({ sub: b.id, act: { sub: a.id } });
    expect(await issuedCount(gateway, clientId)).toBe(1);
    const introspection = await postForm(
      `${gateway.url}/oauth/introspect`,
      { token: result.access_token },
      { authorization: basic(clientId, secret) },
    );
    expect(introspection.body).toMatchObject({
      active: true,
      sub: c.id,
      act: { sub: b.id, act: { sub: a.id } },
    });
  });

  it('a chain that ends at another agent than the client’s is access_denied; nothing is issued', async () => {
    const { b, clientId, credential, chain } = await delegation();
    const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
    // The chain A → B, proved by B's key, for C's client.
    const location = await authorize(clientId, credential, chain.slice(0, 1), b.key, challenge);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.has('code')).toBe(false);
    expect(await issuedCount(gateway, clientId)).toBe(0);
  });

  it('a chain that widens the tools is access_denied; nothing is issued', async () => {
    const { c, clientId, credential, chain } = await delegation([['read'], ['read', 'write']]);
    const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
    const location = await authorize(clientId, credential, chain, c.key, challenge);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('error_description')).toContain('DELEGATION_TOOLS_WIDENED');
    expect(location.searchParams.has('code')).toBe(false);
    expect(await issuedCount(gateway, clientId)).toBe(0);
  });
});
