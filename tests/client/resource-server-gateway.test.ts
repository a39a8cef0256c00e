// The verifier against a real gateway: forwards under oauthMode mcp_as carry a token the gateway
// minted; an MCP SDK upstream guarded by requireGatewayToken (and the plain test upstream, whose
// bearer is checked here) accepts it only at the server it was minted for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearerToken,
  GatewayTokenError,
  verifyGatewayAccessToken,
} from '../../client/src/resource-server.js';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../support/mcp-upstream.js';
import { type GuardedMcpServer, startGuardedMcpServer } from './guarded-mcp-server.js';

let gateway: TestGateway;
let guarded: GuardedMcpServer;
let upstream: McpUpstream;

beforeAll(async () => {
  gateway = await startTestGateway('pglite');
  guarded = await startGuardedMcpServer({ issuer: gateway.url, resource: 'mcp://guarded' });
  upstream = await startMcpUpstream({ responseMode: 'json', stateful: false });
});

afterAll(async () => {
  await guarded?.close();
  await upstream?.close();
  await gateway?.close();
});

async function forwardWhoami(serverId: string, oauthMode: 'mcp_as' | 'none' = 'mcp_as') {
  const tenant = await gateway.addTenant();
  await gateway.registerServer({ tenantId: tenant.id, serverId, url: guarded.url });
  await gateway.setPolicy(tenant.id, { trustedServers: [serverId], oauthMode });
  const answer = await gateway.inspect(
    inspectBody(tenant.agentId, { mode: 'production', server: serverId, tool: 'whoami', args: {} }),
    { key: tenant.key },
  );
  return { tenant, answer };
}

describe('verifying gateway-minted tokens', () => {
  it('an upstream guarded by requireGatewayToken runs a forward under mcp_as and sees who called', async () => {
    const calls = guarded.toolCalls;
    const { tenant, answer } = await forwardWhoami('guarded');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      decision: 'allow',
      response: {
        result: {
          structuredContent: {
            clientId: 'gateway',
            scopes: [],
            resource: 'mcp://guarded',
            extra: { sub: tenant.agentId, tenantId: tenant.id, jti: expect.any(String) },
          },
        },
      },
    });
    expect(guarded.toolCalls).toBe(calls + 1);
  });

  it('the guarded upstream refuses a forward whose token was minted for another server', async () => {
    const calls = guarded.toolCalls;
    const refused = guarded.refusals.length;
    const { answer } = await forwardWhoami('not-guarded');
    expect([answer.status, answer.body.reasonCode, answer.body.message]).toEqual([
      502,
      'MCP_UPSTREAM_ERROR',
      'HTTP 401 without a JSON-RPC response',
    ]);
    expect(guarded.toolCalls).toBe(calls);
    expect(guarded.refusals.slice(refused)).toEqual(['TOKEN_WRONG_AUDIENCE']);
  });

  it('the guarded upstream refuses a forward that carries no token (oauthMode none)', async () => {
    const calls = guarded.toolCalls;
    const refused = guarded.refusals.length;
    const { answer } = await forwardWhoami('guarded', 'none');
    expect([answer.status, answer.body.reasonCode, answer.body.message]).toEqual([
      502,
      'MCP_UPSTREAM_ERROR',
      'HTTP 401 without a JSON-RPC response',
    ]);
    expect(guarded.toolCalls).toBe(calls);
    expect(guarded.refusals.slice(refused)).toEqual(['TOKEN_MISSING']);
  });

  it('the bearer the test upstream receives verifies for its server and only there', async () => {
    const tenant = await gateway.addTenant();
    await gateway.registerServer({ tenantId: tenant.id, serverId: 'files', url: upstream.url });
    await gateway.setPolicy(tenant.id, { trustedServers: ['files'], oauthMode: 'mcp_as' });
    const answer = await gateway.inspect(inspectBody(tenant.agentId, { mode: 'production' }), {
      key: tenant.key,
    });
    expect(answer.status).toBe(200);
    const token = bearerToken(upstream.lastAuthorization);

    const claims = await verifyGatewayAccessToken(token, {
      issuer: gateway.url,
      resource: 'mcp://files',
    });
    expect(claims).toMatchObject({
      iss: gateway.url,
      sub: tenant.agentId,
      aud: 'mcp://files',
      client_id: 'gateway',
      tenant_id: tenant.id,
      scope: '',
    });
    expect(claims.exp - claims.iat).toBe(300);

    const elsewhere = await verifyGatewayAccessToken(token, {
      issuer: gateway.url,
      resource: 'mcp://other',
    }).catch((error: unknown) => error);
    expect(elsewhere).toBeInstanceOf(GatewayTokenError);
    expect((elsewhere as GatewayTokenError).code).toBe('TOKEN_WRONG_AUDIENCE');
  });
});
