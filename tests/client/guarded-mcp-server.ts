// An MCP SDK server guarded the way client/README.md tells upstream authors to guard theirs:
// node:http, requireGatewayToken in front of a stateless Streamable HTTP transport, RFC 9728
// protected-resource metadata beside it, refusals as 401/503 with a Bearer challenge.
// Its one tool, `whoami`, answers with the auth info the SDK handed it (extra.authInfo).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  bearerChallenge,
  GatewayTokenError,
  type GatewayTokenErrorCode,
  requireGatewayToken,
} from '../../client/src/resource-server.js';

export interface GuardedMcpServer {
  readonly url: string;
  readonly metadataUrl: string;
  /** Calls that reached the tool, i.e. passed the guard. */
  readonly toolCalls: number;
  /** Codes of the refused requests, in order. */
  readonly refusals: readonly GatewayTokenErrorCode[];
  close(): Promise<void>;
}

export async function startGuardedMcpServer(options: {
  readonly issuer: string;
  readonly resource: string;
}): Promise<GuardedMcpServer> {
  const { issuer, resource } = options;
  const guard = requireGatewayToken({ issuer, resource });
  const refusals: GatewayTokenErrorCode[] = [];
  let toolCalls = 0;
  let metadataUrl = '';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url === '/.well-known/oauth-protected-resource') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ resource, authorization_servers: [issuer] }));
      return;
    }
    try {
      await guard(req);
    } catch (error) {
      if (!(error instanceof GatewayTokenError)) throw error;
      refusals.push(error.code);
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
    refusals,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
