// The authorization_code grant with PKCE (docs/oauth.md): the agent authorizes with its identity
// credential and an agent-authz+jwt proof at /oauth/authorize instead of a browser login, then
// oauth4webapi redeems the code at the token endpoint. Attack tests assert the exact error and
// that nothing was issued.
import { randomUUID } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../../control-plane/services/agents.js';
import {
  AUTHORIZATION_CODE_LIFETIME_MS,
  AuthorizationCodes,
} from '../../../data-plane/oauth/authorization-codes.js';
import {
  type Ed25519KeyMaterial,
  generateEd25519KeyMaterial,
} from '../../../shared/agentiam/ed25519-keys.js';
import { bumpConfigVersionSql } from '../../../storage/tables/config-version.js';
import { issueCredential } from '../../support/agentiam-client.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { issuedCount, registerClientOf, signAgentProof } from './oauth-fixture.js';

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';

interface CodeClient {
  readonly clientId: string;
  readonly secret: string;
  readonly agentId: string;
  readonly tenantId: string;
  readonly key: Ed25519KeyMaterial;
  readonly credential: Record<string, unknown>;
}

describeEachDatabase('the authorization_code grant with PKCE (agent-identity proof)', (kind) => {
  let gateway: TestGateway;
  let as: oauth.AuthorizationServer;
  const insecure = { [oauth.allowInsecureRequests]: true } as const;
  let files = '';

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    for (const serverId of ['files', 'other']) {
      await gateway.registerServer({
        tenantId: gateway.tenant.id,
        serverId,
        url: `http://127.0.0.1:9/${serverId}`,
      });
    }
    const issuer = new URL(gateway.url);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
    );
    files = 'mcp://files';
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function addCodeClient(tenantId = gateway.tenant.id): Promise<CodeClient> {
    const key = generateEd25519KeyMaterial();
    const { id: agentId } = await createAgent(gateway.db, {
      tenantId,
      name: `authz-${randomUUID().slice(0, 8)}`,
      allowedTools: ['*'],
      mcpAudiences: ['mcp://files', 'mcp://other'],
      publicKey: key.publicKeyMultibase,
    });
    const { clientId, secret } = await registerClientOf(gateway, {
      tenantId,
      agentId,
      grantTypes: ['authorization_code'],
      redirectUris: [REDIRECT_URI],
    });
    const credential = await issueCredential(gateway, { id: agentId as never, tenantId });
    await gateway.sync();
    return { clientId, secret: secret!, agentId, tenantId, key, credential };
  }

  function agentProof(
    client: CodeClient,
    codeChallenge: string,
    overrides: { key?: Ed25519KeyMaterial; jti?: string; iat?: number } = {},
  ): Promise<string> {
    return signAgentProof(overrides.key ?? client.key, {
      clientId: client.clientId,
      issuer: gateway.url,
      codeChallenge,
      iat: overrides.iat,
      jti: overrides.jti,
    });
  }

  interface AuthorizeOptions {
    readonly params?: Record<string, string | undefined>;
    readonly proofKey?: Ed25519KeyMaterial;
    readonly jti?: string;
    readonly credential?: Record<string, unknown>;
  }

  /** GET /oauth/authorize; the answer's status and Location (or JSON body). */
  async function authorize(client: CodeClient, challenge: string, options: AuthorizeOptions = {}) {
    const params: Record<string, string | undefined> = {
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      resource: files,
      agent_credential: JSON.stringify(options.credential ?? client.credential),
      agent_proof: await agentProof(client, challenge, {
        key: options.proofKey,
        jti: options.jti,
      }),
      ...options.params,
    };
    const url = new URL(`${gateway.url}/oauth/authorize`);
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    const response = await fetch(url, { redirect: 'manual' });
    const location = response.headers.get('location');
    return {
      status: response.status,
      location: location === null ? undefined : new URL(location),
      body: location === null ? ((await response.json()) as Record<string, unknown>) : undefined,
    };
  }

  async function redeem(
    client: CodeClient,
    code: string,
    verifier: string,
    redirectUri = REDIRECT_URI,
  ) {
    const callback = new URL(redirectUri);
    callback.searchParams.set('code', code);
    callback.searchParams.set('iss', gateway.url);
    const params = oauth.validateAuthResponse(
      as,
      { client_id: client.clientId },
      callback,
      oauth.skipStateCheck,
    );
    return oauth.authorizationCodeGrantRequest(
      as,
      { client_id: client.clientId },
      oauth.ClientSecretBasic(client.secret),
      params,
      redirectUri,
      verifier,
      insecure,
    );
  }

  async function expectGrantRefused(response: Response, error: string, client: CodeClient) {
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error });
    expect(await issuedCount(gateway, client.clientId)).toBe(0);
  }

  function expectRedirectError(
    answer: Awaited<ReturnType<typeof authorize>>,
    error: string,
    description?: string,
  ) {
    expect(answer.status).toBe(302);
    expect(answer.location?.origin + answer.location!.pathname).toBe(REDIRECT_URI);
    expect(answer.location?.searchParams.get('error')).toBe(error);
    expect(answer.location?.searchParams.get('state')).toBe('st-1');
    expect(answer.location?.searchParams.has('code')).toBe(false);
    if (description !== undefined) {
      expect(answer.location?.searchParams.get('error_description')).toContain(description);
    }
  }

  it('an agent authorizes with its credential and proof; oauth4webapi redeems the code with PKCE for an RFC 9068 token', async () => {
    const client = await addCodeClient();
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const answer = await authorize(client, challenge);
    expect(answer.status).toBe(302);
    const params = oauth.validateAuthResponse(
      as,
      { client_id: client.clientId },
      answer.location!,
      'st-1',
    );
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      { client_id: client.clientId },
      oauth.ClientSecretBasic(client.secret),
      params,
      REDIRECT_URI,
      verifier,
      insecure,
    );
    const result = await oauth.processAuthorizationCodeResponse(
      as,
      { client_id: client.clientId },
      response,
    );
    expect(result.token_type).toBe('bearer');
    const { payload, protectedHeader } = await jwtVerify(
      result.access_token,
      createRemoteJWKSet(new URL(as.jwks_uri!)),
      { issuer: gateway.url, audience: files, typ: 'at+jwt', algorithms: ['EdDSA'] },
    );
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(payload).toMatchObject({
      sub: client.agentId,
      client_id: client.clientId,
      tenant_id: client.tenantId,
    });
    expect(await issuedCount(gateway, client.clientId)).toBe(1);

    // The code is used up: a replay is invalid_grant and issues nothing more.
    const replay = await redeem(client, params.get('code')!, verifier);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await issuedCount(gateway, client.clientId)).toBe(1);
  });

  it('a wrong PKCE verifier is invalid_grant, and burns the code', async () => {
    const client = await addCodeClient();
    const verifier = oauth.generateRandomCodeVerifier();
    const answer = await authorize(client, await oauth.calculatePKCECodeChallenge(verifier));
    const code = answer.location!.searchParams.get('code')!;
    await expectGrantRefused(
      await redeem(client, code, oauth.generateRandomCodeVerifier()),
      'invalid_grant',
      client,
    );
    await expectGrantRefused(await redeem(client, code, verifier), 'invalid_grant', client);
  });

  it('another redirect_uri at the token endpoint, or another client, is invalid_grant', async () => {
    const client = await addCodeClient();
    const other = await addCodeClient();
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const first = await authorize(client, challenge);
    await expectGrantRefused(
      await redeem(
        client,
        first.location!.searchParams.get('code')!,
        verifier,
        'http://127.0.0.1:8765/else',
      ),
      'invalid_grant',
      client,
    );
    const second = await authorize(client, challenge);
    await expectGrantRefused(
      await redeem(other, second.location!.searchParams.get('code')!, verifier),
      'invalid_grant',
      other,
    );
    expect(await issuedCount(gateway, client.clientId)).toBe(0);
  });

  it('an unregistered redirect_uri or unknown client_id is 400 JSON, never redirected', async () => {
    const client = await addCodeClient();
    const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
    for (const params of [
      { redirect_uri: 'http://127.0.0.1:8765/callback/evil' },
      { redirect_uri: 'https://attacker.example/cb' },
      { redirect_uri: undefined },
      { client_id: 'agc_AAAAAAAAAAAAAAAAAAAAAA', redirect_uri: 'https://attacker.example/cb' },
    ]) {
      const answer = await authorize(client, challenge, {
        params: { ...params, ...(params.redirect_uri === undefined ? { redirect_uri: '' } : {}) },
      });
      expect(answer.status).toBe(400);
      expect(answer.location).toBeUndefined();
      expect(answer.body).toMatchObject({ error: 'invalid_request' });
    }
  });

  it('a missing or plain code challenge is redirected as invalid_request', async () => {
    const client = await addCodeClient();
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    expectRedirectError(
      await authorize(client, challenge, { params: { code_challenge_method: 'plain' } }),
      'invalid_request',
      'code_challenge_method must be S256',
    );
    expectRedirectError(
      await authorize(client, challenge, { params: { code_challenge_method: undefined } }),
      'invalid_request',
      'code_challenge_method is required',
    );
    expectRedirectError(
      await authorize(client, challenge, { params: { code_challenge: undefined } }),
      'invalid_request',
      'code_challenge is required',
    );
    expectRedirectError(
      await authorize(client, challenge, {
        params: { code_challenge: verifier, code_challenge_method: 'plain' },
      }),
      'invalid_request',
    );
    expectRedirectError(
      await authorize(client, challenge, { params: { resource: 'mcp://unknown' } }),
      'invalid_target',
    );
  });

  it("another agent's credential, a proof by another key, a replayed proof jti: access_denied", async () => {
    const client = await addCodeClient();
    const other = await addCodeClient();
    const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
    expectRedirectError(
      await authorize(client, challenge, { credential: other.credential }),
      'access_denied',
      'agent_credential names agent',
    );
    expectRedirectError(
      await authorize(client, challenge, { proofKey: other.key }),
      'access_denied',
      'agent_proof',
    );
    const jti = randomUUID();
    const first = await authorize(client, challenge, { jti });
    expect(first.location?.searchParams.has('code')).toBe(true);
    expectRedirectError(
      await authorize(client, challenge, { jti }),
      'access_denied',
      'already used',
    );
  });

  it('a killed agent is access_denied at the authorization endpoint', async () => {
    const client = await addCodeClient();
    await gateway.db.query(`update agents set status = 'killed' where id = $1`, [client.agentId]);
    await bumpConfigVersionSql(gateway.db, client.tenantId);
    await gateway.sync();
    const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
    expectRedirectError(await authorize(client, challenge), 'access_denied', 'killed');
    expect(await issuedCount(gateway, client.clientId)).toBe(0);
  });
});

describe('authorization codes (in memory)', () => {
  const grant = {
    clientId: 'agc_x',
    tenantId: 't',
    agentId: 'a',
    delegationChain: [],
    redirectUri: REDIRECT_URI,
    codeChallenge: 'c',
    resource: 'mcp://files',
    credentialId: undefined,
  };

  it('a code is 256 random bits, usable once, and not after 60 s', () => {
    const codes = new AuthorizationCodes();
    const now = 1_000_000;
    const code = codes.issue(grant, now)!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(codes.consume(code, now + 59_999)).toMatchObject({ kind: 'grant', grant });
    expect(codes.consume(code, now + 60_000)).toMatchObject({ kind: 'replayed' });
    const late = codes.issue(grant, now)!;
    expect(codes.consume(late, now + AUTHORIZATION_CODE_LIFETIME_MS)).toEqual({ kind: 'unknown' });
    expect(codes.consume('never-issued', now)).toEqual({ kind: 'unknown' });
  });

  it('a full store issues no code until codes expire', () => {
    const codes = new AuthorizationCodes({ capacity: 1 });
    expect(codes.issue(grant, 0)).toBeDefined();
    expect(codes.issue(grant, 1)).toBeUndefined();
    expect(codes.issue(grant, AUTHORIZATION_CODE_LIFETIME_MS)).toBeDefined();
  });
});
