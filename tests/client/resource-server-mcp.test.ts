// The verifier in the place it is made for: in front of an MCP SDK server's Streamable HTTP
// transport on node:http, with the RFC 9728 metadata beside it, called by the SDK's own client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GuardedMcpServer, startGuardedMcpServer } from './guarded-mcp-server.js';
import { startTokenIssuer, type TokenIssuer } from './token-issuer.js';

const RESOURCE = 'mcp://guarded';

let issuer: TokenIssuer;
let guarded: GuardedMcpServer;

beforeAll(async () => {
  issuer = await startTokenIssuer();
  guarded = await startGuardedMcpServer({ issuer: issuer.issuer, resource: RESOURCE });
});

afterAll(async () => {
  await guarded.close();
  await issuer.close();
});

async function post(token: string | undefined): Promise<Response> {
  return fetch(guarded.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

describe('requireGatewayToken in front of an MCP SDK server', () => {
  it('lets the SDK client in with a token for this server; tools see it as extra.authInfo', async () => {
    const token = await issuer.mint(RESOURCE, { claims: { scope: 'tools:call', sub: 'agt_a' } });
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(guarded.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      expect(result.structuredContent).toEqual({
        clientId: 'gateway',
        scopes: ['tools:call'],
        resource: RESOURCE,
        extra: { sub: 'agt_a', jti: expect.any(String), tenantId: 'ten_test' },
      });
    } finally {
      await client.close();
    }
  });

  it('answers 401 with a Bearer challenge naming the resource metadata when the token is missing', async () => {
    const calls = guarded.toolCalls;
    const response = await post(undefined);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${guarded.metadataUrl}"`,
    );
    expect(guarded.toolCalls).toBe(calls);
  });

  it('answers 401 invalid_token for a token minted for another server', async () => {
    const response = await post(await issuer.mint('mcp://another'));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect(await response.json()).toEqual({
      error: 'invalid_token',
      error_description: 'token not issued for this resource',
    });
  });

  it('publishes RFC 9728 metadata naming the resource and the gateway as its authorization server', async () => {
    const response = await fetch(guarded.metadataUrl);
    expect(await response.json()).toEqual({
      resource: RESOURCE,
      authorization_servers: [issuer.issuer],
    });
  });
});
