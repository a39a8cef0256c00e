// Forwarding under oauthMode mcp_as (spec §5.3): a real MCP SDK upstream receives a token the
// gateway minted for it, verifiable with the gateway's published JWKS.
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';

describeEachDatabase('forwards under oauthMode mcp_as', (kind) => {
  let gateway: TestGateway;
  let upstream: McpUpstream;
  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const bearerOf = (authorization: string | undefined) => {
    expect(authorization).toMatch(/^Bearer /);
    return (authorization as string).slice('Bearer '.length);
  };

  it('carry a gateway-minted token for mcp://{serverId}, reused by the next call', async () => {
    const tenant = await gateway.addTenant();
    await gateway.registerServer({ tenantId: tenant.id, serverId: 'files', url: upstream.url });
    await gateway.setPolicy(tenant.id, { trustedServers: ['files'], oauthMode: 'mcp_as' });
    const before = upstream.log.length;
    const first = await gateway.inspect(inspectBody(tenant.agentId, { mode: 'production' }), {
      key: tenant.key,
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ decision: 'allow', response: { result: {} } });
    const seen = upstream.log.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    const token = bearerOf(seen[0]?.authorization);
    // Every request of the forward (initialize, notification, call) carries the same token.
    for (const request of seen) expect(request.authorization).toBe(`Bearer ${token}`);

    const jwks = createRemoteJWKSet(new URL(`${gateway.url}/oauth/jwks`));
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer: gateway.url,
      audience: 'mcp://files',
      typ: 'at+jwt',
      algorithms: ['EdDSA'],
    });
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt' });
    expect(payload).toMatchObject({
      sub: tenant.agentId,
      aud: 'mcp://files',
      client_id: 'gateway',
      tenant_id: tenant.id,
      scope: '',
    });
    expect((payload.exp as number) - (payload.iat as number)).toBe(300);

    const second = await gateway.inspect(
      inspectBody(tenant.agentId, { mode: 'production', id: 2 }),
      { key: tenant.key },
    );
    expect(second.status).toBe(200);
    expect(upstream.lastAuthorization).toBe(`Bearer ${token}`);
    // Signed once: the second forward was a cache hit.
    const issued = await gateway.runtime.metrics.oauthTokensIssued.get();
    expect(issued.values.find((v) => v.labels.kind === 'forward')?.value).toBe(1);

    // Recorded (batched, off the request path) with no client.
    await gateway.runtime.issuedTokens.flush();
    const rows = await gateway.db.query<Record<string, unknown>>(
      `select id, "clientId", "agentId", audience, "tenantId" from issued_tokens where id = $1`,
      [decodeJwt(token).jti],
    );
    expect(rows).toEqual([
      {
        id: payload.jti,
        clientId: null,
        agentId: tenant.agentId,
        audience: 'mcp://files',
        tenantId: tenant.id,
      },
    ]);
  });

  it('mint one token per server: a token for server A is not the one sent to server B', async () => {
    const tenant = await gateway.addTenant();
    await gateway.registerServer({ tenantId: tenant.id, serverId: 'a', url: upstream.url });
    await gateway.registerServer({ tenantId: tenant.id, serverId: 'b', url: upstream.url });
    await gateway.setPolicy(tenant.id, { trustedServers: ['a', 'b'], oauthMode: 'mcp_as' });
    await gateway.inspect(inspectBody(tenant.agentId, { mode: 'production', server: 'a' }), {
      key: tenant.key,
    });
    const forA = bearerOf(upstream.lastAuthorization);
    await gateway.inspect(inspectBody(tenant.agentId, { mode: 'production', server: 'b' }), {
      key: tenant.key,
    });
    const forB = bearerOf(upstream.lastAuthorization);
    expect(decodeJwt(forA).aud).toBe('mcp://a');
    expect(decodeJwt(forB).aud).toBe('mcp://b');
    const jwks = createRemoteJWKSet(new URL(`${gateway.url}/oauth/jwks`));
    await expect(
      jwtVerify(forA, jwks, { issuer: gateway.url, audience: 'mcp://b', algorithms: ['EdDSA'] }),
    ).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });
  });

  it('still refuse a token the agent presents for forwarding (MCP_TOKEN_PASSTHROUGH)', async () => {
    const tenant = await gateway.addTenant();
    await gateway.registerServer({ tenantId: tenant.id, serverId: 'files', url: upstream.url });
    await gateway.setPolicy(tenant.id, { trustedServers: ['files'], oauthMode: 'mcp_as' });
    const before = upstream.requests;
    const answer = await gateway.inspect(inspectBody(tenant.agentId, { mode: 'production' }), {
      key: tenant.key,
      headers: { 'MCP-Authorization': 'Bearer agent-token-123' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ decision: 'deny', reasonCode: 'MCP_TOKEN_PASSTHROUGH' });
    expect(upstream.requests).toBe(before);
  });
});
