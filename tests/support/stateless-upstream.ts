// A small MCP server of the stateless era (2026-07-28) for the proxy's tests, written here from
// the revision's Streamable HTTP and versioning pages (the SDK 1.x the project uses speaks only
// the session era; the conformance project's dual-era reference server is the other fixture,
// tests/support/conformance-2026.ts). It keeps a log of every request it received (method, the
// headers that matter, the body), so a test can assert what was forwarded and that a refusal
// forwarded nothing.
// - server/discover, tools/list (echo, secret_tool), tools/call: echo answers its text (with a
//   progress notification first on an SSE answer when `progress` is true); needs_sampling
//   answers 400 MissingRequiredClientCapability unless the client declared sampling; confirm asks
//   first (an InputRequiredResult with a form elicitation and its own requestState, CONFIRM_STATE)
//   and answers `confirmed <text>` on the retry that carries that state and an accepting answer;
//   wait never answers: its request ends when the client closes it (counted in `cancelled`);
// - subscriptions/listen: an SSE stream that acknowledges, then carries what `notifyTools()`
//   sends, until either side closes it;
// - initialize (no stateless `_meta`): 400 UnsupportedProtocolVersion, as a server of this era
//   only answers a session-era client; any other method: 404 Method not found.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const VERSION = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

export interface StatelessUpstreamRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read what they sent
  readonly body: any;
}

export interface StatelessTestUpstream {
  /** http://127.0.0.1:<port>/mcp */
  readonly url: string;
  readonly log: readonly StatelessUpstreamRequest[];
  /** Listen streams open now. */
  readonly listening: number;
  /** `wait` calls whose client closed them (in this era, the cancellation). */
  readonly cancelled: number;
  /** Sends notifications/tools/list_changed on every open listen stream that asked for it. */
  notifyTools(): void;
  close(): Promise<void>;
}

/** The requestState the `confirm` tool hands out with its question, and expects back. */
export const CONFIRM_STATE = 'upstream-confirm-state:7f3a';

/** Listed in this order (not by name): the proxy's answer is sorted. */
export const STATELESS_TOOLS = [
  { name: 'secret_tool', description: 'Not for every agent.', inputSchema: { type: 'object' } },
  {
    name: 'echo',
    description: 'Echoes its text.',
    inputSchema: {
      type: 'object',
      properties: {
        text: { type: 'string' },
        region: { type: 'string', 'x-mcp-header': 'Region' },
      },
    },
  },
];

interface Listener {
  readonly res: ServerResponse;
  readonly id: string | number;
  readonly tools: boolean;
}

export async function startStatelessUpstream(): Promise<StatelessTestUpstream> {
  const log: StatelessUpstreamRequest[] = [];
  const listeners = new Set<Listener>();
  let cancelled = 0;
  const server = createServer((req, res) => {
    readJson(req)
      .then((body) => answer(req, res, body))
      .catch(() => {
        if (!res.headersSent) res.writeHead(400).end();
      });
  });

  function answer(req: IncomingMessage, res: ServerResponse, body: unknown) {
    if (req.method !== 'POST' || typeof body !== 'object' || body === null) {
      res.writeHead(405).end();
      return;
    }
    const message = body as {
      id?: string | number;
      method?: string;
      params?: Record<string, unknown>;
    };
    const method = String(message.method ?? '');
    log.push({ method, headers: req.headers, body });
    const id = message.id ?? null;
    const meta = message.params?._meta as Record<string, unknown> | undefined;
    if (meta?.[META_VERSION] !== VERSION) {
      return json(res, 400, {
        jsonrpc: '2.0',
        id,
        error: {
          code: -32022,
          message: 'Unsupported protocol version',
          data: { supported: [VERSION], requested: String(meta?.[META_VERSION] ?? '') },
        },
      });
    }
    const result = (value: Record<string, unknown>) =>
      json(res, 200, { jsonrpc: '2.0', id, result: { resultType: 'complete', ...value } });
    switch (method) {
      case 'server/discover':
        return result({
          supportedVersions: [VERSION],
          capabilities: { tools: {} },
          ttlMs: 0,
          cacheScope: 'public',
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'stateless-test', version: '1' } },
        });
      case 'tools/list':
        return result({ tools: STATELESS_TOOLS, ttlMs: 300_000, cacheScope: 'public' });
      case 'tools/call': {
        const params = message.params ?? {};
        const args = (params.arguments ?? {}) as Record<string, unknown>;
        if (params.name === 'needs_sampling') {
          const capabilities = meta[META_CAPABILITIES] as Record<string, unknown> | undefined;
          if (!capabilities?.sampling) {
            return json(res, 400, {
              jsonrpc: '2.0',
              id,
              error: {
                code: -32021,
                message: 'Missing required client capability',
                data: { requiredCapabilities: { sampling: {} } },
              },
            });
          }
        }
        if (params.name === 'wait') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.flushHeaders();
          res.on('close', () => {
            cancelled += 1;
          });
          return;
        }
        if (params.name === 'confirm') {
          const answer = (params.inputResponses as Record<string, { action?: string }> | undefined)
            ?.confirm;
          if (params.requestState !== CONFIRM_STATE || answer?.action !== 'accept') {
            return json(res, 200, {
              jsonrpc: '2.0',
              id,
              result: {
                resultType: 'input_required',
                inputRequests: {
                  confirm: {
                    method: 'elicitation/create',
                    params: {
                      mode: 'form',
                      message: 'Confirm?',
                      requestedSchema: { type: 'object', properties: {} },
                    },
                  },
                },
                requestState: CONFIRM_STATE,
              },
            });
          }
          return result({ content: [{ type: 'text', text: `confirmed ${String(args.text)}` }] });
        }
        const done = { content: [{ type: 'text', text: String(args.text ?? '') }] };
        if (args.progress === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const progressToken = (meta as { progressToken?: unknown }).progressToken ?? 'p';
          sse(res, {
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken, progress: 1, total: 2 },
          });
          sse(res, { jsonrpc: '2.0', id, result: { resultType: 'complete', ...done } });
          res.end();
          return;
        }
        return result(done);
      }
      case 'subscriptions/listen': {
        const wanted = (message.params?.notifications ?? {}) as Record<string, unknown>;
        const listener: Listener = {
          res,
          id: id ?? 'listen',
          tools: wanted.toolsListChanged === true,
        };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        sse(res, {
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: {
            _meta: { 'io.modelcontextprotocol/subscriptionId': String(listener.id) },
            notifications: listener.tools ? { toolsListChanged: true } : {},
          },
        });
        listeners.add(listener);
        res.on('close', () => listeners.delete(listener));
        return;
      }
      default:
        return json(res, 404, {
          jsonrpc: '2.0',
          id,
          error: { code: -32601, message: 'Method not found' },
        });
    }
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    get listening() {
      return listeners.size;
    },
    get cancelled() {
      return cancelled;
    },
    notifyTools() {
      for (const listener of listeners) {
        if (!listener.tools) continue;
        sse(listener.res, {
          jsonrpc: '2.0',
          method: 'notifications/tools/list_changed',
          params: { _meta: { 'io.modelcontextprotocol/subscriptionId': String(listener.id) } },
        });
      }
    },
    async close() {
      for (const listener of listeners) listener.res.end();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function sse(res: ServerResponse, message: unknown): void {
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}
