// A loopback relay that shows a dual-era MCP server (the conformance project's reference server)
// as a server of the session era only: a POST without Mcp-Session-Id that is not `initialize` is
// refused as an SDK 1.x server refuses it (400, JSON-RPC -32000, "no valid session ID"), and
// everything else (initialize, requests on a session, GET streams, DELETE) passes unchanged. With
// it, a stateless client's run through the gateway exercises the gateway's bridge to a session
// (data-plane/mcp-proxy/session-bridge.ts) against the same reference implementation.
import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SessionOnlyView {
  /** The target URL with the relay's origin. */
  readonly url: string;
  /** POSTs refused because they came without a session. */
  readonly refused: number;
  close(): Promise<void>;
}

export async function startSessionOnlyView(target: string): Promise<SessionOnlyView> {
  const targetUrl = new URL(target);
  let refused = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST' && req.headers['mcp-session-id'] === undefined) {
        let method: unknown;
        try {
          method = (JSON.parse(body.toString('utf8')) as { method?: unknown }).method;
        } catch {
          method = undefined;
        }
        if (method !== 'initialize') {
          refused += 1;
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
            }),
          );
          return;
        }
      }
      const upstream = httpRequest(
        {
          host: targetUrl.hostname,
          port: targetUrl.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: targetUrl.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
          res.flushHeaders();
          answer.pipe(res);
          answer.on('error', () => res.destroy());
        },
      );
      upstream.on('error', () => {
        if (res.headersSent) res.destroy();
        else res.writeHead(502).end();
      });
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      upstream.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${targetUrl.pathname}${targetUrl.search}`,
    get refused() {
      return refused;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
