// The verifier in the place it is made for: in front of an MCP SDK server's Streamable HTTP
// transport on node:http, with the RFC 9728 metadata beside it, called by the SDK's own client.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearerChallenge,
  GatewayTokenError,
  requireGatewayToken,
} from '../../client/src/resource-server.js';
import { startTokenIssuer, type TokenIssuer } from './token-issuer.js';

const RESOURCE = 'mcp://guarded';

interface GuardedServer {
  readonly url: string;
  readonly metadataUrl: string;
  readonly toolCalls: number;
  close(): Promise<void>;
}

// The README's example, run for real.
async function startGuardedServer(issuer: string): Promise<GuardedServer> {
  const guard = requireGatewayToken({ issuer, resource: RESOURCE });
  let toolCalls = 0;
  let metadataUrl = '';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url === '/.well-known/oauth-protected-resource') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ resource: RESOURCE, authorization_servers: [issuer] }));
      return;
    }
    try {
      await guard(req);
    } catch (error) {
      if (!(error instanceof GatewayTokenError)) throw error;
      res.writeHead(error.status, {
        'content-type': 'application/json',
        'www-authenticate': bearerChallenge(error, { resourceMetadata: metadataUrl }),
      });
      res.end(JSON.stringify({ error: 'invalid_token', error_description: error.message }));
      return;
    }
    const server = new McpServer({ name: 'guarded', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Who called.' }, async (extra) => {
      toolCalls++;
      const auth = extra.authInfo;
      return {
        content: [{ type: 'text', text: 'ok' }],
        structuredContent: {
          clientId: auth?.clientId,
          scopes: auth?.scopes,
          resource: auth?.resource?.href,
          extra: auth?.extra,
        },
      };
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  const http: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  metadataUrl = `${base}/.well-known/oauth-protected-resource`;
  return {
    url: `${base}/mcp`,
    metadataUrl,
    get toolCalls() {
      return toolCalls;
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

let issuer: TokenIssuer;
let guarded: GuardedServer;

beforeAll(async () => {
  issuer = await startTokenIssuer();
  guarded = await startGuardedServer(issuer.issuer);
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
