// An MCP server built with the official TypeScript SDK v2 (`@modelcontextprotocol/server` 2.4.0,
// engines node >= 20), the release line of MCP 2026-07-28: `createMcpHandler` serves the stateless
// era, and with `legacy: 'stateless'` also answers 2025-era requests without sessions. Its
// handler is web-standard (`fetch(Request) => Response`); the adapter below mounts it on
// node:http (the SDK's own adapter is a separate package; a dozen lines suffice here).
// Tools: `echo` (answers its text) and `add`.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

export interface McpV2Upstream {
  /** http://127.0.0.1:<port>/mcp */
  readonly url: string;
  /** tools/call requests received, by tool name. */
  readonly calls: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

export async function startMcpV2Upstream(
  options: { readonly legacy?: 'stateless' | 'reject' } = {},
): Promise<McpV2Upstream> {
  const calls = new Map<string, number>();
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'sdk-v2-upstream', version: '2.4.0' });
      server.registerTool(
        'echo',
        {
          description: 'Echoes its text.',
          inputSchema: z.object({ text: z.string() }),
        },
        async ({ text }) => {
          count('echo');
          return { content: [{ type: 'text', text }] };
        },
      );
      server.registerTool(
        'add',
        {
          description: 'Adds two numbers.',
          inputSchema: z.object({ a: z.number(), b: z.number() }),
        },
        async ({ a, b }) => {
          count('add');
          return { content: [{ type: 'text', text: String(a + b) }] };
        },
      );
      return server;
    },
    { legacy: options.legacy ?? 'stateless' },
  );
  const server = createServer((req, res) => {
    serve(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const address = server.address() as AddressInfo;
    const url = `http://127.0.0.1:${address.port}${req.url ?? '/'}`;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
    }
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(url, {
      method: req.method ?? 'GET',
      headers,
      signal: controller.signal,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } : {}),
    } as RequestInit);
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) {
      res.end();
      return;
    }
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
