// POST /oauth/introspect (RFC 7662) and POST /oauth/revoke (RFC 7009): client-authenticated,
// own tenant only; introspection verifies the JWT itself; a revoked jti is refused right after
// the 200, written to IssuedToken, audited, and reaches the snapshot.
import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeOAuthClient } from '../../../control-plane/services/oauth-clients.js';
import { bumpConfigVersionSql } from '../../../storage/tables/config-version.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { addClient, basic, clientAssertion, postForm, type TestClient } from './oauth-fixture.js';

describeEachDatabase('OAuth introspection and revocation', (kind) => {
  let gateway: TestGateway;
  let client: TestClient;
  let urls: { token: string; introspect: string; revoke: string };
  beforeAll(async () => {
    gateway = await startTestGateway(kind, {
      oauthAuthFailureLimits: { perClient: 1_000, perAddress: 1_000 },
    });
    urls = {
      token: `${gateway.url}/oauth/token`,
      introspect: `${gateway.url}/oauth/introspect`,
      revoke: `${gateway.url}/oauth/revoke`,
    };
    client = await addClient(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const auth = (c: TestClient = client) => ({ authorization: basic(c.clientId, c.secret!) });

  async function issue(c: TestClient = client, resource = 'mcp://files'): Promise<string> {
    const answer = await postForm(
      urls.token,
      { grant_type: 'client_credentials', resource },
      auth(c),
    );
    expect(answer.status).toBe(200);
    return answer.body.access_token as string;
  }

  async function introspect(token: string, c: TestClient = client) {
    const answer = await postForm(urls.introspect, { token }, auth(c));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    return answer.body;
  }

  describe('introspection', () => {
    it('describes a token issued a moment ago (before the recorder wrote its row)', async () => {
      const token = await issue();
      const body = await introspect(token);
      expect(body).toEqual({
        active: true,
        scope: '',
        client_id: client.clientId,
        token_type: 'Bearer',
        exp: expect.any(Number),
        iat: expect.any(Number),
        sub: client.agentId,
        aud: 'mcp://files',
        iss: gateway.url,
        jti: expect.any(String),
        tenant_id: client.tenant.id,
      });
    });

    it('authenticates with private_key_jwt too (aud the introspection endpoint)', async () => {
      const jwtClient = await addClient(gateway, {
        authMethod: 'private_key_jwt',
        tenant: client.tenant,
      });
      const assertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
      const issued = await postForm(urls.token, {
        grant_type: 'client_credentials',
        resource: 'mcp://files',
        client_assertion_type: assertionType,
        client_assertion: await clientAssertion(jwtClient, urls.token),
      });
      expect(issued.status).toBe(200);
      const answer = await postForm(urls.introspect, {
        token: issued.body.access_token as string,
        client_assertion_type: assertionType,
        client_assertion: await clientAssertion(jwtClient, urls.introspect),
      });
      expect(answer.status).toBe(200);
      expect(answer.body.active).toBe(true);
    });

    it('answers active: false for another tenant, garbage, forged, expired, alg none and HS256 tokens', async () => {
      const foreign = await addClient(gateway);
      const token = await issue();
      expect(await introspect(token, foreign)).toEqual({ active: false });
      expect(await introspect('not-a-token')).toEqual({ active: false });
      const forged = await new SignJWT({ client_id: client.clientId, tenant_id: client.tenant.id })
        .setProtectedHeader({
          alg: 'EdDSA',
          typ: 'at+jwt',
          kid: gateway.runtime.tokenSigner!.kid,
        })
        .setIssuer(gateway.url)
        .setSubject(client.agentId)
        .setAudience('mcp://files')
        .setIssuedAt()
        .setExpirationTime('5m')
        .setJti(randomUUID())
        .sign(generateKeyPairSync('ed25519').privateKey);
      expect(await introspect(forged)).toEqual({ active: false });
      const expired = await gateway.runtime.tokenSigner!.mint(
        {
          sub: client.agentId,
          aud: 'mcp://files',
          clientId: client.clientId,
          tenantId: client.tenant.id,
          scope: '',
        },
        -10,
      );
      expect(await introspect(expired.token)).toEqual({ active: false });
      // alg none with the same claims.
      const [, payload] = token.split('.');
      const none = `${Buffer.from('{"alg":"none","typ":"at+jwt"}').toString('base64url')}.${payload}.`;
      expect(await introspect(none)).toEqual({ active: false });
      // HS256 keyed with the public key (the algorithm-confusion attack), same claims and kid.
      const signer = gateway.runtime.tokenSigner!;
      const header = Buffer.from(
        JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid: signer.kid }),
      ).toString('base64url');
      for (const secret of [
        Buffer.from(signer.publicJwk.x as string, 'base64url'),
        Buffer.from(JSON.stringify(signer.publicJwk)),
      ]) {
        const input = `${header}.${payload}`;
        const mac = createHmac('sha256', secret).update(input).digest('base64url');
        expect(await introspect(`${input}.${mac}`)).toEqual({ active: false });
      }
    });

    it('answers active: false once the agent is killed, or the client revoked', async () => {
      const victim = await addClient(gateway, { tenant: client.tenant });
      const token = await issue(victim);
      expect((await introspect(token, victim)).active).toBe(true);
      await revokeOAuthClient(
        { db: gateway.db, audit: gateway.runtime.audit },
        { tenantId: victim.tenant.id, clientId: victim.clientId, actor: 'test' },
      );
      await gateway.sync();
      // The revoked client cannot ask any more; no other client sees the token active.
      expect((await postForm(urls.introspect, { token }, auth(victim))).status).toBe(401);
      expect(await introspect(token)).toEqual({ active: false });

      const doomed = await addClient(gateway, { tenant: client.tenant });
      const second = await issue(doomed);
      expect((await introspect(second, doomed)).active).toBe(true);
      await gateway.db.query(`update agents set status = 'killed' where id = $1`, [doomed.agentId]);
      await bumpConfigVersionSql(gateway.db, doomed.tenant.id);
      await gateway.sync();
      expect((await postForm(urls.introspect, { token: second }, auth(doomed))).status).toBe(401);
      expect(await introspect(second)).toEqual({ active: false });
    });

    it('refuses an unauthenticated caller (401 invalid_client) and a missing token (400)', async () => {
      const token = await issue();
      const anonymous = await postForm(urls.introspect, { token });
      expect({ status: anonymous.status, error: anonymous.body.error }).toEqual({
        status: 401,
        error: 'invalid_client',
      });
      expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="agent-gateway"');
      const wrong = await postForm(
        urls.introspect,
        { token },
        { authorization: basic(client.clientId, 'A'.repeat(43)) },
      );
      expect({ status: wrong.status, error: wrong.body.error }).toEqual({
        status: 401,
        error: 'invalid_client',
      });
      const missing = await postForm(urls.introspect, {}, auth());
      expect({ status: missing.status, error: missing.body.error }).toEqual({
        status: 400,
        error: 'invalid_request',
      });
    });
  });

  describe('revocation', () => {
    it('refuses the jti right after the 200, writes revokedAt, audits, and bumps the tenant', async () => {
      const token = await issue();
      const jti = (await introspect(token)).jti as string;
      const version = async () =>
        (
          await gateway.db.query<{ v: number }>(
            `select "configVersion" as v from tenants where id = $1`,
            [client.tenant.id],
          )
        )[0]?.v;
      const before = await version();
      const answer = await postForm(urls.revoke, { token }, auth());
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(await introspect(token)).toEqual({ active: false });
      expect(await version()).toBe((before as number) + 1);

      // The recorder's row, written later, leaves the revocation alone.
      await gateway.runtime.issuedTokens.flush();
      const rows = await gateway.db.query<{ revokedAt: Date | null; clientId: string }>(
        `select "revokedAt", "clientId" from issued_tokens where id = $1`,
        [jti],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]?.revokedAt).toBeInstanceOf(Date);
      expect(rows[0]?.clientId).toBe(client.clientId);

      await gateway.runtime.audit.flush();
      const audit = await gateway.db.query<{ resourceType: string; metadata: { actor: string } }>(
        `select "resourceType", metadata from audit_entries where action = 'oauth.token_revoked' and "resourceId" = $1`,
        [jti],
      );
      expect(audit).toEqual([
        {
          resourceType: 'access_token',
          metadata: expect.objectContaining({ actor: client.clientId, agentId: client.agentId }),
        },
      ]);

      // The next snapshot carries it to every data plane.
      await gateway.sync();
      const tenant = gateway.runtime.store.current?.tenants.get(client.tenant.id);
      expect(tenant?.source.revokedTokens.map((t) => t.jti)).toContain(jti);

      // Revoking again: 200, nothing more written.
      expect((await postForm(urls.revoke, { token }, auth())).status).toBe(200);
      expect(await version()).toBe((before as number) + 1);
    });

    it('answers 200 and changes nothing for another tenant’s token or garbage', async () => {
      const foreign = await addClient(gateway);
      const token = await issue();
      expect((await postForm(urls.revoke, { token }, auth(foreign))).status).toBe(200);
      expect((await introspect(token)).active).toBe(true);
      expect((await postForm(urls.revoke, { token: 'garbage' }, auth())).status).toBe(200);
    });

    it('refuses an unauthenticated caller (401) and a missing token (400)', async () => {
      const token = await issue();
      const anonymous = await postForm(urls.revoke, { token });
      expect({ status: anonymous.status, error: anonymous.body.error }).toEqual({
        status: 401,
        error: 'invalid_client',
      });
      expect((await introspect(token)).active).toBe(true);
      const missing = await postForm(urls.revoke, {}, auth());
      expect({ status: missing.status, error: missing.body.error }).toEqual({
        status: 400,
        error: 'invalid_request',
      });
    });
  });
});

describe('revoking a gateway-minted forwarding token', () => {
  let gateway: TestGateway;
  let upstream: McpUpstream;
  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: false });
    gateway = await startTestGateway('pglite');
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('is possible for a client of the tenant; the row is written with no client', async () => {
    const client = await addClient(gateway);
    await gateway.registerServer({
      tenantId: client.tenant.id,
      serverId: 'live',
      url: upstream.url,
    });
    await gateway.setPolicy(client.tenant.id, { trustedServers: ['live'], oauthMode: 'mcp_as' });
    const forwarded = await gateway.inspect(
      inspectBody(client.agentId, { mode: 'production', server: 'live' }),
      { key: client.tenant.key },
    );
    expect(forwarded.status).toBe(200);
    const token = (upstream.lastAuthorization as string).slice('Bearer '.length);
    const answer = await postForm(
      `${gateway.url}/oauth/revoke`,
      { token },
      { authorization: basic(client.clientId, client.secret!) },
    );
    expect(answer.status).toBe(200);
    const introspected = await postForm(
      `${gateway.url}/oauth/introspect`,
      { token },
      { authorization: basic(client.clientId, client.secret!) },
    );
    expect(introspected.body).toEqual({ active: false });
    const rows = await gateway.db.query<{ clientId: string | null; revokedAt: Date | null }>(
      `select "clientId", "revokedAt" from issued_tokens where audience = 'mcp://live'`,
    );
    expect(rows).toEqual([{ clientId: null, revokedAt: expect.any(Date) }]);

    // The next forward does not reuse the revoked token from the cache.
    const next = await gateway.inspect(
      inspectBody(client.agentId, { mode: 'production', server: 'live', id: 2 }),
      { key: client.tenant.key },
    );
    expect(next.status).toBe(200);
    expect(upstream.lastAuthorization).toMatch(/^Bearer /);
    expect(upstream.lastAuthorization).not.toBe(`Bearer ${token}`);
  });

  it('a token revoked on another data plane (in the snapshot) is not reused either', async () => {
    const client = await addClient(gateway);
    await gateway.registerServer({
      tenantId: client.tenant.id,
      serverId: 'live',
      url: upstream.url,
    });
    await gateway.setPolicy(client.tenant.id, { trustedServers: ['live'], oauthMode: 'mcp_as' });
    const forward = (id: number) =>
      gateway.inspect(inspectBody(client.agentId, { mode: 'production', server: 'live', id }), {
        key: client.tenant.key,
      });
    expect((await forward(1)).status).toBe(200);
    const token = upstream.lastAuthorization as string;
    await gateway.runtime.issuedTokens.flush();
    // What another data plane's revocation leaves in the database.
    await gateway.db.query(
      `update issued_tokens set "revokedAt" = now() where "tenantId" = $1 and audience = 'mcp://live'`,
      [client.tenant.id],
    );
    await bumpConfigVersionSql(gateway.db, client.tenant.id);
    await gateway.sync();
    expect((await forward(2)).status).toBe(200);
    expect(upstream.lastAuthorization).toMatch(/^Bearer /);
    expect(upstream.lastAuthorization).not.toBe(token);
  });
});
