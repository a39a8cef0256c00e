// A real MCP server for tests: the official SDK's McpServer behind StreamableHTTPServerTransport on
// a plain node:http server (127.0.0.1, random port), in the four transport configurations the
// gateway must handle: JSON or SSE answers, stateful (Mcp-Session-Id) or stateless.
//
// It counts what reaches it (HTTP requests, tool calls, sessions) and records the headers the
// gateway must or must not send, so tests can assert that a call was — or was not — forwarded.
//
//   const upstream = await startMcpUpstream({ responseMode: 'sse', stateful: true });
//   … forward to upstream.url …
//   expect(upstream.calls.get('echo')).toBe(1);
//   await upstream.close();
//
// Tools:
//   echo({ text?, … })        → text content: JSON of its arguments; structuredContent: the arguments
//   slow({ ms })              → waits ms (timeouts, aborts), then text 'done'
//   fail({})                  → a tool error result (isError: true)
//   drop_table({ table })     → annotated destructiveHint: true
//   read_rows({ table })      → annotated readOnlyHint: true
//   notify_then_echo({ text, count? }) → sends `count` (default 2) logging notifications first
//                               (they travel in the SSE answer), then answers like echo
//   block({})                 → (with `blockTool: true`) never answers: it waits until its request is cancelled or the
//                               upstream closes (the kill switch's in-flight call); the upstream
//                               counts requests whose client closed the connection before the
//                               answer (`closedByClient`, `waitForClosedByClient`)
//   plus `extraTools` (each answers 'done'), e.g. a destructive tool under a harmless name
// `setToolDescription(name, text)` changes a tool's description from then on (tool-definition
// pinning's "rug pull"): new sessions and stateless requests list the new text, and live
// sessions' tools are updated too.
import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface McpUpstreamOptions {
  /** 'json': `enableJsonResponse` (one JSON body per request); 'sse': an event stream per request. */
  readonly responseMode: 'json' | 'sse';
  /** true: the server assigns an Mcp-Session-Id at initialize and requires it afterwards. */
  readonly stateful: boolean;
  /** Server name announced in `initialize`. Default 'test-upstream'. */
  readonly name?: string;
  /** More tools, with the annotations their tools/list declares; each answers 'done'. */
  readonly extraTools?: readonly {
    readonly name: string;
    readonly annotations?: Readonly<Record<string, boolean | string>>;
  }[];
  /** Adds the `block` tool (the kill switch's in-flight call). Default false. */
  readonly blockTool?: boolean;
  /** Awaited before a request with this JSON-RPC method is handled (e.g. a slow tools/list). */
  readonly holdMethod?: { readonly method: string; readonly until: () => Promise<void> };
}

/** What the upstream saw of one HTTP request. */
export interface McpUpstreamRequest {
  readonly httpMethod: string;
  /** JSON-RPC method of the body (undefined for GET/DELETE or an unparsable body). */
  readonly rpcMethod: string | undefined;
  readonly sessionId: string | undefined;
  readonly protocolVersion: string | undefined;
  readonly authorization: string | undefined;
}

export interface McpUpstream {
  /** The Streamable HTTP endpoint: http://127.0.0.1:<port>/mcp */
  readonly url: string;
  /** Calls per tool name (counted when the tool handler runs). */
  readonly calls: Map<string, number>;
  /** Every HTTP request received, in order. */
  readonly log: readonly McpUpstreamRequest[];
  /** Number of HTTP requests received. */
  readonly requests: number;
  /** The Authorization header of the latest request (undefined when absent). */
  readonly lastAuthorization: string | undefined;
  /** Sessions created (stateful mode); 0 for a stateless upstream. */
  readonly sessionsCreated: number;
  /** Ids of the sessions currently alive (stateful mode). */
  readonly liveSessions: readonly string[];
  /** Forgets every session server-side, as a restart would: old ids then get 404. */
  expireSessions(): Promise<void>;
  /** HTTP requests whose client closed the connection before the answer was complete. */
  readonly closedByClient: number;
  /** Changes the description `tool` is listed with, for every session from now on. */
  setToolDescription(tool: string, description: string): void;
  /** Resolves once `count` calls of `tool` have reached their handler (no polling). */
  waitForCalls(tool: string, count: number): Promise<void>;
  /** Resolves once `closedByClient` reaches `count`. */
  waitForClosedByClient(count: number): Promise<void>;
  /** Lets every call of the `block` tool in flight answer ('released'). */
  releaseBlocked(): void;
  close(): Promise<void>;
}

function buildServer(
  name: string,
  calls: Map<string, number>,
  extraTools: McpUpstreamOptions['extraTools'] = [],
  activity: EventEmitter = new EventEmitter(),
  blockTool = false,
  descriptions: ToolDescriptions = { overrides: new Map(), live: new Set() },
): McpServer {
  const server = new McpServer({ name, version: '1.0.0' }, { capabilities: { logging: {} } });
  // Every tool registered below is kept, with the description setToolDescription gave it.
  const tools = new Map<string, RegisteredTool>();
  const register = server.registerTool.bind(server) as (...args: unknown[]) => RegisteredTool;
  server.registerTool = ((toolName: string, ...rest: unknown[]) => {
    const tool = register(toolName, ...rest);
    tools.set(toolName, tool);
    const description = descriptions.overrides.get(toolName);
    if (description !== undefined) tool.update({ description });
    return tool;
  }) as typeof server.registerTool;
  descriptions.live.add(tools);
  server.server.onclose = () => descriptions.live.delete(tools);
  const count = (tool: string) => {
    calls.set(tool, (calls.get(tool) ?? 0) + 1);
    activity.emit('change');
  };
  if (blockTool) {
    server.registerTool(
      'block',
      { description: 'Never answers until cancelled.' },
      async (extra) => {
        count('block');
        if (!extra.signal.aborted) {
          await new Promise<void>((resolve) => {
            extra.signal.addEventListener('abort', () => resolve(), { once: true });
            activity.once('release', resolve);
          });
        }
        return { content: [{ type: 'text', text: 'released' }] };
      },
    );
  }
  for (const tool of extraTools) {
    server.registerTool(
      tool.name,
      { description: `The ${tool.name} tool.`, annotations: { ...tool.annotations } },
      async () => {
        count(tool.name);
        return { content: [{ type: 'text', text: 'done' }] };
      },
    );
  }
  server.registerTool(
    'echo',
    {
      description: 'Returns its arguments.',
      inputSchema: { text: z.string().optional() },
    },
    async (args) => {
      count('echo');
      return { content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: args };
    },
  );
  server.registerTool(
    'slow',
    { description: 'Waits `ms` milliseconds.', inputSchema: { ms: z.number().int().min(0) } },
    async ({ ms }) => {
      count('slow');
      await new Promise((resolve) => setTimeout(resolve, ms).unref());
      return { content: [{ type: 'text', text: 'done' }] };
    },
  );
  server.registerTool('fail', { description: 'Always fails.' }, async () => {
    count('fail');
    return { isError: true, content: [{ type: 'text', text: 'failure requested' }] };
  });
  server.registerTool(
    'drop_table',
    {
      description: 'Drops a table.',
      inputSchema: { table: z.string() },
      annotations: { destructiveHint: true, readOnlyHint: false },
    },
    async ({ table }) => {
      count('drop_table');
      return { content: [{ type: 'text', text: `dropped ${table}` }] };
    },
  );
  server.registerTool(
    'read_rows',
    {
      description: 'Reads rows.',
      inputSchema: { table: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ table }) => {
      count('read_rows');
      return { content: [{ type: 'text', text: `rows of ${table}` }] };
    },
  );
  server.registerTool(
    'notify_then_echo',
    {
      description: 'Sends logging notifications, then returns its arguments.',
      inputSchema: { text: z.string(), count: z.number().int().min(0).max(100).optional() },
    },
    async (args, extra) => {
      count('notify_then_echo');
      for (let i = 0; i < (args.count ?? 2); i++) {
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', data: `step ${i}` },
        });
      }
      return { content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: args };
    },
  );
  return server;
}

/** Descriptions changed by setToolDescription, and the tools of live servers to update. */
interface ToolDescriptions {
  readonly overrides: Map<string, string>;
  readonly live: Set<Map<string, RegisteredTool>>;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function isInitialize(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    (body as { method?: unknown }).method === 'initialize'
  );
}

export async function startMcpUpstream(options: McpUpstreamOptions): Promise<McpUpstream> {
  const name = options.name ?? 'test-upstream';
  const enableJsonResponse = options.responseMode === 'json';
  const calls = new Map<string, number>();
  const log: McpUpstreamRequest[] = [];
  const activity = new EventEmitter();
  activity.setMaxListeners(0);
  let closedByClient = 0;
  const waitFor = async (check: () => boolean) => {
    while (!check()) await once(activity, 'change');
  };
  const sessions = new Map<
    string,
    { transport: StreamableHTTPServerTransport; server: McpServer }
  >();
  let sessionsCreated = 0;
  const descriptions: ToolDescriptions = { overrides: new Map(), live: new Set() };

  /** A server with this upstream's tools (one per session, or per request when stateless). */
  const newServer = () =>
    buildServer(name, calls, options.extraTools, activity, options.blockTool, descriptions);

  async function handleStateful(req: IncomingMessage, res: ServerResponse, body: unknown) {
    const sessionId = header(req, 'mcp-session-id');
    const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (existing) {
      await existing.transport.handleRequest(req, res, body);
      return;
    }
    if (sessionId !== undefined) {
      sendJsonRpcError(res, 404, -32001, 'Session not found');
      return;
    }
    if (req.method !== 'POST' || !isInitialize(body)) {
      sendJsonRpcError(res, 400, -32000, 'Bad Request: no session id; initialize first');
      return;
    }
    const server = newServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse,
      onsessioninitialized: (id) => {
        sessionsCreated++;
        sessions.set(id, { transport, server });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handleStateless(req: IncomingMessage, res: ServerResponse, body: unknown) {
    // A fresh server and transport per request, as the SDK requires for stateless mode.
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  const http: Server = createServer((req, res) => {
    res.on('close', () => {
      if (res.writableFinished) return;
      closedByClient++;
      activity.emit('change');
    });
    void (async () => {
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      log.push({
        httpMethod: req.method ?? '',
        rpcMethod:
          typeof (body as { method?: unknown } | undefined)?.method === 'string'
            ? (body as { method: string }).method
            : undefined,
        sessionId: header(req, 'mcp-session-id'),
        protocolVersion: header(req, 'mcp-protocol-version'),
        authorization: header(req, 'authorization'),
      });
      const rpcMethod = (body as { method?: unknown } | undefined)?.method;
      if (options.holdMethod && rpcMethod === options.holdMethod.method) {
        await options.holdMethod.until();
      }
      if (req.url?.split('?')[0] !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      if (options.stateful) await handleStateful(req, res, body);
      else await handleStateless(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error');
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  async function expireSessions(): Promise<void> {
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.all(
      all.map(async ({ transport, server }) => {
        await transport.close();
        await server.close();
      }),
    );
  }

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    log,
    get requests() {
      return log.length;
    },
    get lastAuthorization() {
      return log.at(-1)?.authorization;
    },
    get sessionsCreated() {
      return sessionsCreated;
    },
    get liveSessions() {
      return [...sessions.keys()];
    },
    expireSessions,
    setToolDescription(tool, description) {
      descriptions.overrides.set(tool, description);
      for (const tools of descriptions.live) tools.get(tool)?.update({ description });
    },
    get closedByClient() {
      return closedByClient;
    },
    waitForCalls: (tool, count) => waitFor(() => (calls.get(tool) ?? 0) >= count),
    waitForClosedByClient: (count) => waitFor(() => closedByClient >= count),
    releaseBlocked: () => activity.emit('release'),
    async close() {
      activity.emit('release');
      await expireSessions();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
