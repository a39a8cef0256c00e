// Whose tokens a client may act on, and what revokes a token besides RFC 7009 (issue 22 items 4,
// 6 and 14b): a client introspects and revokes only its own tokens (another client's introspects
// inactive, its revocation is unauthorized_client and leaves it alive); an authorization code is
// used up by its first presentation whatever the outcome, and presenting it again revokes the
// tokens issued from it (RFC 6749 §4.1.2); revoking the identity credential an agent proved itself
// with revokes the tokens it obtained with it, even one whose issuance row was not yet written.
// Every token is checked where it is used: introspection by its owner and the MCP proxy.
import { randomUUID } from 'node:crypto';
import { CompactSign, importJWK } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../../control-plane/services/agents.js';
import { IssuedTokenRecorder } from '../../../data-plane/oauth/issued-tokens.js';
import { agentVerificationMethodId } from '../../../shared/agentiam/dids.js';
import {
  type Ed25519KeyMaterial,
  generateEd25519KeyMaterial,
} from '../../../shared/agentiam/ed25519-keys.js';
import { decodeEd25519PublicKey } from '../../../shared/identity/ed25519-multibase.js';
import { type ProxyFixture, startProxyFixture } from '../../mcp-proxy/support.js';
import { expectRefusal, initializeMessage, mcpFetch } from '../../mcp-proxy/transport-support.js';
import { issueCredential, revokeCredential } from '../../support/agentiam-client.js';
import { basic, postForm, registerClientOf } from './oauth-fixture.js';

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';

interface CodeClient {
  readonly clientId: string;
  readonly secret: string;
  readonly agentId: string;
  readonly key: Ed25519KeyMaterial;
  readonly credential: Record<string, unknown>;
}

describe('token ownership and revocation cascades', () => {
  let fixture: ProxyFixture;
  let tenantId: string;
  let resource: string;
  let urls: { token: string; introspect: string; revoke: string; authorize: string };

  beforeAll(async () => {
    fixture = await startProxyFixture(
      'pglite',
      {},
      {
        oauthAuthFailureLimits: { perClient: 1_000, perAddress: 1_000 },
      },
    );
    const { gateway, serverId } = fixture;
    tenantId = gateway.tenant.id;
    resource = `${gateway.url}/mcp/${serverId}`;
    urls = {
      token: `${gateway.url}/oauth/token`,
      introspect: `${gateway.url}/oauth/introspect`,
      revoke: `${gateway.url}/oauth/revoke`,
      authorize: `${gateway.url}/oauth/authorize`,
    };
  });
  afterAll(async () => {
    await fixture?.close();
  });

  /** An agent with a key and a credential, and a client of both grants for it. */
  async function addCodeClient(): Promise<CodeClient> {
    const { gateway, serverId } = fixture;
    const key = generateEd25519KeyMaterial();
    const { id: agentId } = await createAgent(gateway.db, {
      tenantId,
      name: `owner-${randomUUID().slice(0, 8)}`,
      allowedTools: ['*'],
      mcpAudiences: [`mcp://${serverId}`],
      publicKey: key.publicKeyMultibase,
    });
    const { clientId, secret } = await registerClientOf(gateway, {
      tenantId,
      agentId,
      grantTypes: ['authorization_code', 'client_credentials'],
      redirectUris: [REDIRECT_URI],
    });
    const credential = await issueCredential(gateway, { id: agentId as never, tenantId });
    await gateway.sync();
    return { clientId, secret: secret!, agentId, key, credential };
  }

  const auth = (client: CodeClient) => ({ authorization: basic(client.clientId, client.secret) });

  async function clientCredentialsToken(client: CodeClient): Promise<string> {
    const answer = await postForm(
      urls.token,
      { grant_type: 'client_credentials', resource },
      auth(client),
    );
    expect(answer.status).toBe(200);
    return answer.body.access_token as string;
  }

  async function agentProof(client: CodeClient, codeChallenge: string): Promise<string> {
    const x = Buffer.from(decodeEd25519PublicKey(client.key.publicKeyMultibase)!).toString(
      'base64url',
    );
    const privateKey = await importJWK(
      { kty: 'OKP', crv: 'Ed25519', x, d: Buffer.from(client.key.secretKey).toString('base64url') },
      'EdDSA',
    );
    const payload = {
      iss: client.clientId,
      aud: fixture.gateway.url,
      iat: Math.floor(Date.now() / 1000),
      jti: randomUUID(),
      code_challenge: codeChallenge,
    };
    return new CompactSign(Buffer.from(JSON.stringify(payload)))
      .setProtectedHeader({
        alg: 'EdDSA',
        typ: 'agent-authz+jwt',
        kid: agentVerificationMethodId(client.key.publicKeyMultibase),
      })
      .sign(privateKey);
  }

  /** A code from /oauth/authorize, and its verifier. */
  async function authorizationCode(
    client: CodeClient,
  ): Promise<{ code: string; verifier: string }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const url = new URL(urls.authorize);
    const params = {
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's',
      resource,
      agent_credential: JSON.stringify(client.credential),
      agent_proof: await agentProof(client, challenge),
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const code = new URL(response.headers.get('location')!).searchParams.get('code');
    expect(code).toEqual(expect.any(String));
    return { code: code!, verifier };
  }

  const redeem = (client: CodeClient, params: Record<string, string>) =>
    postForm(urls.token, { grant_type: 'authorization_code', ...params }, auth(client));

  async function codeToken(client: CodeClient): Promise<{ token: string; code: string }> {
    const { code, verifier } = await authorizationCode(client);
    const answer = await redeem(client, {
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });
    expect(answer.status).toBe(200);
    return { token: answer.body.access_token as string, code };
  }

  async function introspect(client: CodeClient, token: string) {
    const answer = await postForm(urls.introspect, { token }, auth(client));
    expect(answer.status).toBe(200);
    return answer.body;
  }

  /** The MCP proxy's answer to an initialize with the token. */
  const useAtProxy = (token: string) =>
    mcpFetch(fixture.proxyUrl, {
      body: initializeMessage(),
      headers: { authorization: `Bearer ${token}` },
    });

  async function expectAlive(owner: CodeClient, token: string) {
    expect(await introspect(owner, token)).toMatchObject({ active: true });
    expect((await useAtProxy(token)).status).toBe(200);
  }

  async function expectDead(owner: CodeClient, token: string) {
    expect(await introspect(owner, token)).toEqual({ active: false });
    expectRefusal(await useAtProxy(token), 401, 'MCP_PROXY_UNAUTHORIZED');
  }

  async function tokenRows(clientId: string) {
    await fixture.gateway.runtime.issuedTokens.flush();
    return fixture.gateway.db.query<{
      id: string;
      revokedAt: Date | null;
      credentialId: string | null;
    }>(`select id, "revokedAt", "credentialId" from issued_tokens where "clientId" = $1`, [
      clientId,
    ]);
  }

  async function revokedAudits(jti: string): Promise<number> {
    await fixture.gateway.runtime.audit.flush();
    const rows = await fixture.gateway.db.query<{ n: number }>(
      `select count(*)::int as n from audit_entries
        where action = 'oauth.token_revoked' and "resourceId" = $1`,
      [jti],
    );
    return rows[0]?.n ?? 0;
  }

  describe("another client's token (RFC 7662, RFC 7009 §2.1)", () => {
    it('introspects as inactive for another client of the tenant; its owner sees it active', async () => {
      const owner = await addCodeClient();
      const stranger = await addCodeClient();
      const token = await clientCredentialsToken(owner);
      expect(await introspect(stranger, token)).toEqual({ active: false });
      await expectAlive(owner, token);
    });

    it('another client revoking it is 400 unauthorized_client; nothing is written and the token stays active', async () => {
      const owner = await addCodeClient();
      const stranger = await addCodeClient();
      const token = await clientCredentialsToken(owner);
      const jti = (await introspect(owner, token)).jti as string;
      const version = async () =>
        (
          await fixture.gateway.db.query<{ v: number }>(
            `select "configVersion" as v from tenants where id = $1`,
            [tenantId],
          )
        )[0]?.v;
      const before = await version();
      const answer = await postForm(urls.revoke, { token }, auth(stranger));
      expect(answer.status).toBe(400);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.body).toEqual({
        error: 'unauthorized_client',
        error_description: expect.stringContaining('another client'),
      });
      expect(await version()).toBe(before);
      expect(await tokenRows(owner.clientId)).toEqual([
        { id: jti, revokedAt: null, credentialId: null },
      ]);
      expect(await revokedAudits(jti)).toBe(0);
      await expectAlive(owner, token);
      // Its owner may revoke it.
      expect((await postForm(urls.revoke, { token }, auth(owner))).status).toBe(200);
      await expectDead(owner, token);
    });
  });

  describe('an authorization code is used up by its first presentation', () => {
    it('a request without code_verifier is invalid_request and burns the code: the right verifier then gets invalid_grant', async () => {
      const client = await addCodeClient();
      const { code, verifier } = await authorizationCode(client);
      const missing = await redeem(client, { code, redirect_uri: REDIRECT_URI });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ error: 'invalid_request' });
      const late = await redeem(client, {
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      });
      expect(late.status).toBe(400);
      expect(late.body).toMatchObject({ error: 'invalid_grant' });
      expect(await tokenRows(client.clientId)).toEqual([]);
    });

    it('so is a request without redirect_uri', async () => {
      const client = await addCodeClient();
      const { code, verifier } = await authorizationCode(client);
      expect((await redeem(client, { code, code_verifier: verifier })).status).toBe(400);
      const late = await redeem(client, {
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      });
      expect(late.body).toMatchObject({ error: 'invalid_grant' });
      expect(await tokenRows(client.clientId)).toEqual([]);
    });
  });

  describe('revocation cascades', () => {
    it('a replayed authorization code revokes the token issued from it (RFC 6749 §4.1.2)', async () => {
      const client = await addCodeClient();
      const { code, verifier } = await authorizationCode(client);
      const first = await redeem(client, {
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      });
      expect(first.status).toBe(200);
      const token = first.body.access_token as string;
      const jti = (await introspect(client, token)).jti as string;
      await expectAlive(client, token);
      const replay = await redeem(client, {
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      });
      expect(replay.status).toBe(400);
      expect(replay.body).toEqual({
        error: 'invalid_grant',
        error_description: 'the code was already used; the tokens issued from it are revoked',
      });
      await expectDead(client, token);
      const rows = await tokenRows(client.clientId);
      expect(rows).toEqual([
        { id: jti, revokedAt: expect.any(Date), credentialId: String(client.credential.id) },
      ]);
      expect(await revokedAudits(jti)).toBe(1);
      // Every data plane refuses it with the next snapshot.
      await fixture.gateway.sync();
      const source = fixture.gateway.runtime.store.current?.tenants.get(tenantId)?.source;
      expect(source?.revokedTokens.map((t) => t.jti)).toContain(jti);
    });

    it("revoking the identity credential revokes the tokens obtained with it, not the client's others", async () => {
      const client = await addCodeClient();
      const { token } = await codeToken(client);
      const unrelated = await clientCredentialsToken(client);
      const jti = (await introspect(client, token)).jti as string;
      expect(await tokenRows(client.clientId)).toContainEqual({
        id: jti,
        revokedAt: null,
        credentialId: String(client.credential.id),
      });
      await expectAlive(client, token);
      await revokeCredential(fixture.gateway, tenantId, client.credential);
      await expectDead(client, token);
      await expectAlive(client, unrelated);
      await fixture.gateway.runtime.audit.flush();
      const [entry] = await fixture.gateway.db.query<{ metadata: Record<string, unknown> }>(
        `select metadata from audit_entries where action = 'credential.revoked' and "resourceId" = $1`,
        [String(client.credential.id)],
      );
      expect(entry?.metadata).toMatchObject({ revokedTokens: 1, revokedTokenIds: [jti] });
    });

    it('a token whose issuance row is written after the credential was revoked is written revoked', async () => {
      const { gateway } = fixture;
      const client = await addCodeClient();
      const { token } = await codeToken(client);
      const claims = await introspect(client, token);
      // The row as a data plane's recorder holds it, not yet written when the credential goes.
      const [row] = await tokenRows(client.clientId);
      await gateway.db.query('delete from issued_tokens where id = $1', [claims.jti]);
      await revokeCredential(gateway, tenantId, client.credential);
      const version = async () =>
        (
          await gateway.db.query<{ v: number }>(
            `select "configVersion" as v from tenants where id = $1`,
            [tenantId],
          )
        )[0]?.v as number;
      const before = await version();
      const late = new IssuedTokenRecorder(gateway.db, { intervalMs: 3_600_000 });
      late.record({
        jti: claims.jti as string,
        tenantId,
        clientId: client.clientId,
        agentId: client.agentId,
        audience: resource,
        scope: '',
        issuedAt: claims.iat as number,
        expiresAt: claims.exp as number,
        credentialId: row?.credentialId,
      });
      await late.stop();
      expect(await tokenRows(client.clientId)).toEqual([
        { id: claims.jti, revokedAt: expect.any(Date), credentialId: String(client.credential.id) },
      ]);
      expect(await version()).toBe(before + 1);
      await gateway.sync();
      await expectDead(client, token);
    });
  });
});
