// POST /oauth/token, client_credentials: every client authentication method, the resource rules
// (RFC 8707) and every refusal with its exact status and RFC 6749 error, nothing issued.
import { generateKeyPairSync } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeOAuthClient } from '../../../control-plane/services/oauth-clients.js';
import { bumpConfigVersionSql } from '../../../storage/tables/config-version.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import {
  addClient,
  basic,
  clientAssertion,
  issuedCount,
  type OAuthAnswer,
  postForm,
  type TestClient,
} from './oauth-fixture.js';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

describeEachDatabase('POST /oauth/token (client_credentials)', (kind) => {
  let gateway: TestGateway;
  let secretClient: TestClient;
  let jwtClient: TestClient;
  let tokenUrl: string;
  beforeAll(async () => {
    gateway = await startTestGateway(kind, {
      oauthAuthFailureLimits: { perClient: 1_000, perAddress: 1_000 },
    });
    tokenUrl = `${gateway.url}/oauth/token`;
    secretClient = await addClient(gateway);
    jwtClient = await addClient(gateway, { authMethod: 'private_key_jwt' });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const grant = (resource: string | string[] = 'mcp://files') => ({
    grant_type: 'client_credentials',
    resource,
  });

  async function expectIssued(answer: OAuthAnswer, client: TestClient, resource: string) {
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 300,
      scope: '',
    });
    const jwks = createRemoteJWKSet(new URL(`${gateway.url}/oauth/jwks`));
    const { payload } = await jwtVerify(answer.body.access_token as string, jwks, {
      issuer: gateway.url,
      audience: resource,
      typ: 'at+jwt',
      algorithms: ['EdDSA'],
    });
    expect(payload).toMatchObject({
      sub: client.agentId,
      client_id: client.clientId,
      tenant_id: client.tenant.id,
      scope: '',
      aud: resource,
    });
    expect((payload.exp as number) - (payload.iat as number)).toBe(300);
    return payload;
  }

  /** The exact refusal, and no token issued to the client. */
  async function expectRefused(
    answer: OAuthAnswer,
    status: number,
    error: string,
    client: TestClient = secretClient,
  ) {
    const before = await issuedCount(gateway, client.clientId);
    expect({ status: answer.status, error: answer.body.error }).toEqual({ status, error });
    expect(answer.body).not.toHaveProperty('access_token');
    expect(answer.body.error_description).toEqual(expect.any(String));
    expect(answer.headers.get('cache-control')).toBe('no-store');
    if (status === 401) {
      expect(answer.headers.get('www-authenticate')).toBe('Basic realm="agent-gateway"');
    }
    expect(await issuedCount(gateway, client.clientId)).toBe(before);
  }

  describe('issues', () => {
    it('with client_secret_basic, and records the token', async () => {
      const answer = await postForm(tokenUrl, grant(), {
        authorization: basic(secretClient.clientId, secretClient.secret!),
      });
      const payload = await expectIssued(answer, secretClient, 'mcp://files');
      await gateway.runtime.issuedTokens.flush();
      const rows = await gateway.db.query<Record<string, unknown>>(
        `select "clientId", "agentId", audience, "revokedAt" from issued_tokens where id = $1`,
        [payload.jti],
      );
      expect(rows).toEqual([
        {
          clientId: secretClient.clientId,
          agentId: secretClient.agentId,
          audience: 'mcp://files',
          revokedAt: null,
        },
      ]);
    });

    it('with form-url-encoded Basic credentials (RFC 6749 §2.3.1)', async () => {
      const id = secretClient.clientId.replace(/_/g, '%5F');
      const authorization = `Basic ${Buffer.from(`${id}:${secretClient.secret}`).toString('base64')}`;
      await expectIssued(
        await postForm(tokenUrl, grant(), { authorization }),
        secretClient,
        'mcp://files',
      );
    });

    it('with client_secret_post, though the client registered client_secret_basic', async () => {
      const answer = await postForm(tokenUrl, {
        ...grant(),
        client_id: secretClient.clientId,
        client_secret: secretClient.secret!,
      });
      await expectIssued(answer, secretClient, 'mcp://files');
    });

    it('for <issuer>/mcp/{serverId}, the proxy resource, with aud as requested', async () => {
      const resource = `${gateway.url}/mcp/other`;
      const answer = await postForm(tokenUrl, grant(resource), {
        authorization: basic(secretClient.clientId, secretClient.secret!),
      });
      await expectIssued(answer, secretClient, resource);
    });

    it('from a JSON body too', async () => {
      const response = await fetch(tokenUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: basic(secretClient.clientId, secretClient.secret!),
        },
        body: JSON.stringify(grant()),
      });
      await expectIssued(
        {
          status: response.status,
          headers: response.headers,
          body: (await response.json()) as Record<string, unknown>,
        },
        secretClient,
        'mcp://files',
      );
    });

    it.each([
      ['the token endpoint URL', (url: string) => `${url}/oauth/token`],
      ['the issuer', (url: string) => url],
    ])('with private_key_jwt, aud %s', async (_name, audience) => {
      const answer = await postForm(tokenUrl, {
        ...grant(),
        client_assertion_type: JWT_BEARER,
        client_assertion: await clientAssertion(jwtClient, audience(gateway.url)),
      });
      await expectIssued(answer, jwtClient, 'mcp://files');
    });
  });

  describe('refuses client authentication (401 invalid_client)', () => {
    it('a wrong secret', async () => {
      await expectRefused(
        await postForm(tokenUrl, grant(), {
          authorization: basic(secretClient.clientId, 'A'.repeat(43)),
        }),
        401,
        'invalid_client',
      );
      await expectRefused(
        await postForm(tokenUrl, {
          ...grant(),
          client_id: secretClient.clientId,
          client_secret: `${secretClient.secret}x`,
        }),
        401,
        'invalid_client',
      );
    });

    it('an unknown client, and no credentials at all', async () => {
      await expectRefused(
        await postForm(tokenUrl, grant(), {
          authorization: basic('agc_AAAAAAAAAAAAAAAAAAAAAA', 'A'.repeat(43)),
        }),
        401,
        'invalid_client',
      );
      await expectRefused(await postForm(tokenUrl, grant()), 401, 'invalid_client');
      await expectRefused(
        await postForm(tokenUrl, { ...grant(), client_id: secretClient.clientId }),
        401,
        'invalid_client',
      );
    });

    it('a revoked client', async () => {
      const client = await addClient(gateway);
      await revokeOAuthClient(
        { db: gateway.db, audit: gateway.runtime.audit },
        { tenantId: client.tenant.id, clientId: client.clientId, actor: 'test' },
      );
      await gateway.sync();
      await expectRefused(
        await postForm(tokenUrl, grant(), {
          authorization: basic(client.clientId, client.secret!),
        }),
        401,
        'invalid_client',
        client,
      );
    });

    it('a private_key_jwt client presenting a secret, and a secret client presenting an assertion', async () => {
      await expectRefused(
        await postForm(tokenUrl, grant(), {
          authorization: basic(jwtClient.clientId, 'A'.repeat(43)),
        }),
        401,
        'invalid_client',
        jwtClient,
      );
      await expectRefused(
        await postForm(tokenUrl, {
          ...grant(),
          client_assertion_type: JWT_BEARER,
          client_assertion: await clientAssertion(secretClient, tokenUrl),
        }),
        401,
        'invalid_client',
      );
    });

    it('client assertions: replayed, wrong audience, too long-lived, another key, wrong type', async () => {
      const assertion = await clientAssertion(jwtClient, tokenUrl);
      const withAssertion = (value: string, type = JWT_BEARER) => ({
        ...grant(),
        client_assertion_type: type,
        client_assertion: value,
      });
      await expectIssued(
        await postForm(tokenUrl, withAssertion(assertion)),
        jwtClient,
        'mcp://files',
      );
      await expectRefused(
        await postForm(tokenUrl, withAssertion(assertion)),
        401,
        'invalid_client',
        jwtClient,
      );
      const bad = [
        await clientAssertion(jwtClient, 'https://elsewhere.example/token'),
        await clientAssertion(jwtClient, tokenUrl, { expiresIn: 600 }),
        await clientAssertion(jwtClient, tokenUrl, {
          key: generateKeyPairSync('ed25519').privateKey,
        }),
        await clientAssertion(jwtClient, tokenUrl, { expiresIn: -120 }),
        'not.a.jwt',
      ];
      for (const value of bad) {
        await expectRefused(
          await postForm(tokenUrl, withAssertion(value)),
          401,
          'invalid_client',
          jwtClient,
        );
      }
      await expectRefused(
        await postForm(
          tokenUrl,
          withAssertion(await clientAssertion(jwtClient, tokenUrl), 'urn:other'),
        ),
        401,
        'invalid_client',
        jwtClient,
      );
    });
  });

  describe('refuses the request', () => {
    const auth = () => ({ authorization: basic(secretClient.clientId, secretClient.secret!) });

    it('400 invalid_target: missing, two, unknown, foreign and unlisted resources', async () => {
      const other = await addClient(gateway);
      await gateway.registerServer({
        tenantId: other.tenant.id,
        serverId: 'theirs',
        url: 'http://127.0.0.1:9/theirs',
      });
      const refusals = [
        { grant_type: 'client_credentials' },
        grant(['mcp://files', 'mcp://other']),
        grant('mcp://ghost'),
        grant('mcp://theirs'),
        grant('mcp://unlisted'),
        grant('https://elsewhere.example/mcp/files'),
        grant(`${gateway.url}/mcp/`),
        grant('mcp://files/extra'),
      ];
      for (const params of refusals) {
        await expectRefused(await postForm(tokenUrl, params, auth()), 400, 'invalid_target');
      }
    });

    it("400 invalid_target: a resource of the agent but not among the client's audiences", async () => {
      const narrow = await addClient(gateway, { resources: ['mcp://files'] });
      await expectRefused(
        await postForm(tokenUrl, grant('mcp://other'), {
          authorization: basic(narrow.clientId, narrow.secret!),
        }),
        400,
        'invalid_target',
        narrow,
      );
    });

    // The kill switch revokes a killed agent's clients; one left unrevoked is refused all the same.
    it('401 invalid_client: the agent is killed', async () => {
      const client = await addClient(gateway);
      await gateway.db.query(`update agents set status = 'killed' where id = $1`, [client.agentId]);
      await bumpConfigVersionSql(gateway.db, client.tenant.id);
      await gateway.sync();
      await expectRefused(
        await postForm(tokenUrl, grant(), {
          authorization: basic(client.clientId, client.secret!),
        }),
        401,
        'invalid_client',
        client,
      );
    });

    it('400 unsupported_grant_type and invalid_request (grant_type missing or repeated)', async () => {
      await expectRefused(
        await postForm(tokenUrl, { ...grant(), grant_type: 'password' }, auth()),
        400,
        'unsupported_grant_type',
      );
      await expectRefused(
        await postForm(tokenUrl, { resource: 'mcp://files' }, auth()),
        400,
        'invalid_request',
      );
      await expectRefused(
        await postForm(
          tokenUrl,
          { ...grant(), grant_type: ['client_credentials', 'client_credentials'] },
          auth(),
        ),
        400,
        'invalid_request',
      );
    });

    it('400 invalid_request: two client authentication methods at once', async () => {
      await expectRefused(
        await postForm(
          tokenUrl,
          { ...grant(), client_id: secretClient.clientId, client_secret: secretClient.secret! },
          auth(),
        ),
        400,
        'invalid_request',
      );
    });

    it.each([
      ['a JSON array', 'application/json', '[1,2]', 400, 'invalid_request'],
      ['a JSON number value', 'application/json', '{"grant_type":5}', 400, 'invalid_request'],
      ['JSON that does not parse', 'application/json', '{"grant_type":', 400, 'invalid_request'],
      [
        'a body over 16 KiB',
        'application/x-www-form-urlencoded',
        `a=${'x'.repeat(17_000)}`,
        413,
        'invalid_request',
      ],
    ])('%s: %i %s', async (_name, type, body, status, error) => {
      const response = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': type, ...auth() },
        body,
      });
      expect(response.status).toBe(status);
      expect(((await response.json()) as { error: string }).error).toBe(error);
    });

    it.each([
      ['Basic !!!'],
      ['Bearer some-token'],
      [`Basic ${Buffer.from('no-colon').toString('base64')}`],
      [`Basic ${Buffer.from('agc_%zz:secret').toString('base64')}`],
    ])('401 invalid_client for the Authorization header %s', async (authorization) => {
      await expectRefused(
        await postForm(tokenUrl, grant(), { authorization }),
        401,
        'invalid_client',
      );
    });

    it('400 invalid_request: a body that is neither form nor JSON', async () => {
      const response = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', ...auth() },
        body: 'grant_type=client_credentials',
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    });
  });
});

describe('failed client authentications are rate-limited (429 temporarily_unavailable)', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway('pglite', {
      oauthAuthFailureLimits: { perClient: 3, perAddress: 5, windowMs: 60_000 },
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('refuses wrong secrets per client and address, then per address, with Retry-After; the right secret is never refused', async () => {
    const tokenUrl = `${gateway.url}/oauth/token`;
    const client = await addClient(gateway);
    const params = { grant_type: 'client_credentials', resource: 'mcp://files' };
    const wrong = (c: { clientId: string }) =>
      postForm(tokenUrl, params, { authorization: basic(c.clientId, 'A'.repeat(43)) });
    for (let i = 0; i < 3; i += 1) expect((await wrong(client)).status).toBe(401);
    // Past the threshold, a wrong secret is refused with 429 and Retry-After, many times over.
    for (let i = 0; i < 10; i += 1) {
      const limited = await wrong(client);
      expect(limited.status).toBe(429);
      expect(limited.body.error).toBe('temporarily_unavailable');
      expect(limited.headers.get('cache-control')).toBe('no-store');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(await issuedCount(gateway, client.clientId)).toBe(0);
    // The right secret, from the same address, still gets its token at once.
    const right = await postForm(tokenUrl, params, {
      authorization: basic(client.clientId, client.secret!),
    });
    expect(right.status).toBe(200);
    expect(right.body.access_token).toEqual(expect.any(String));
    expect(await issuedCount(gateway, client.clientId)).toBe(1);
    // ... and wrong ones are still refused after it (a success resets nothing).
    expect((await wrong(client)).status).toBe(429);

    // Another client from the same address: two failures (under its own limit) reach the
    // address's five; its right secret is accepted all the same.
    const other = await addClient(gateway, { tenant: client.tenant });
    for (let i = 0; i < 2; i += 1) expect((await wrong(other)).status).toBe(401);
    const byAddress = await wrong(other);
    expect(byAddress.status).toBe(429);
    expect(Number(byAddress.headers.get('retry-after'))).toBeGreaterThan(0);
    const otherRight = await postForm(tokenUrl, params, {
      authorization: basic(other.clientId, other.secret!),
    });
    expect(otherRight.status).toBe(200);
    const failures = await gateway.runtime.metrics.oauthClientAuthFailures.get();
    expect(Object.fromEntries(failures.values.map((v) => [v.labels.outcome, v.value]))).toEqual({
      refused: 5,
      rate_limited: 12,
    });
  });
});
