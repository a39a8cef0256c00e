// What the proxy's transport, auth, relay and kill tests share beyond ./support.ts:
// - raw Streamable HTTP over fetch (`mcpFetch`: an answer read as JSON or as an SSE stream of
//   JSON-RPC messages; `openRawSession`: initialize + notifications/initialized), for the
//   refusals an SDK client never lets a test send;
// - `expectRefusal`: a transport refusal's exact status and JSON-RPC error body;
// - `startRelayUpstream`: a stateful SDK upstream (the low-level `Server`, so tool definitions
//   are exactly what the test wrote, JSON Schema 2020-12 keywords included) whose tools use what
//   a proxy must relay: progress and log messages with the caller's progressToken, sampling and
//   elicitation requests on the call's own stream, every content type, an `isError` result; plus
//   resources, prompts, and notifications sent outside any request (the GET stream).
import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import {
  createServer,
  type Server as HttpServer,
  request as httpRequest,
  type IncomingMessage,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

export const LATEST_VERSION = '2025-11-25';

/** What a raw request to the proxy answered. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** The JSON body, or the last message of an SSE stream; undefined when empty. */
  // biome-ignore lint/suspicious/noExplicitAny: assertions check the shape at run time
  readonly body: any;
  /** Every JSON-RPC message of an SSE answer (the JSON body alone otherwise). */
  // biome-ignore lint/suspicious/noExplicitAny: assertions check the shape at run time
  readonly messages: any[];
}

/**
 * A raw request to the proxy. `body` (not a string) is sent as JSON; POSTs accept JSON and SSE
 * answers as the transport spec requires of clients.
 */
export async function mcpFetch(
  url: string,
  init: {
    method?: string;
    body?: unknown;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  } = {},
): Promise<RawAnswer> {
  const method = init.method ?? 'POST';
  const headers: Record<string, string> = {
    ...(method === 'POST'
      ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
      : {}),
    ...(method === 'GET' ? { accept: 'text/event-stream' } : {}),
    ...init.headers,
  };
  const response = await fetch(url, {
    method,
    headers,
    ...(init.body === undefined
      ? {}
      : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  let messages: unknown[] = [];
  if (type.startsWith('text/event-stream')) messages = parseSse(text);
  else if (text !== '') messages = [JSON.parse(text)];
  return { status: response.status, headers: response.headers, body: messages.at(-1), messages };
}

/**
 * A POST left in flight until `abort()`: its own socket (node:http, no keep-alive pool), so
 * aborting it leaves no pooled connection behind that would hold up the gateway's shutdown.
 * `answer` resolves with the status and text when it completes, or undefined once aborted.
 */
export function postInFlight(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): { answer: Promise<{ status: number; text: string } | undefined>; abort(): void } {
  const payload = JSON.stringify(body);
  const request = httpRequest(url, {
    method: 'POST',
    agent: false,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': Buffer.byteLength(payload),
      ...headers,
    },
  });
  const answer = new Promise<{ status: number; text: string } | undefined>((resolve) => {
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', () => resolve(undefined));
    });
    request.on('error', () => resolve(undefined));
    request.on('close', () => resolve(undefined));
  });
  request.end(payload);
  return { answer, abort: () => request.destroy() };
}

/** The JSON-RPC messages of an event stream's `data:` fields. */
export function parseSse(text: string): unknown[] {
  const messages: unknown[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data !== '') messages.push(JSON.parse(data));
  }
  return messages;
}

export function initializeMessage(id: number | string = 0, version = LATEST_VERSION) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: version,
      capabilities: {},
      clientInfo: { name: 'raw-test', version: '1.0.0' },
    },
  };
}

/** A request body of the stateless era (2026-07-28): `params` with the revision's `_meta`. */
export function statelessRequest(
  method: string,
  params: Record<string, unknown>,
  id: string | number,
  capabilities: Record<string, unknown> = {},
) {
  return {
    jsonrpc: '2.0' as const,
    id,
    method,
    params: {
      ...params,
      _meta: {
        ...(params._meta as Record<string, unknown> | undefined),
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'stateless-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': capabilities,
      },
    },
  };
}

/** The headers the stateless era requires of `body` (its revision, method and name). */
export function statelessHeaders(body: {
  method: string;
  params: Record<string, unknown>;
}): Record<string, string> {
  const name = body.params.name ?? body.params.uri;
  return {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': body.method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
  };
}

export function apiKeyHeaders(key: string, agentId: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, 'x-agent-id': agentId };
}

/** initialize + notifications/initialized over raw HTTP; the headers a session's requests carry. */
export async function openRawSession(
  proxyUrl: string,
  auth: Record<string, string>,
): Promise<{ sessionId: string; headers: Record<string, string> }> {
  const answer = await mcpFetch(proxyUrl, { body: initializeMessage(), headers: auth });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.result.protocolVersion).toBe(LATEST_VERSION);
  const sessionId = answer.headers.get('mcp-session-id');
  expect(sessionId).toBeTruthy();
  const headers = {
    ...auth,
    'mcp-session-id': sessionId as string,
    'mcp-protocol-version': LATEST_VERSION,
  };
  const initialized = await mcpFetch(proxyUrl, {
    body: { jsonrpc: '2.0', method: 'notifications/initialized' },
    headers,
  });
  expect(initialized.status).toBe(202);
  return { sessionId: sessionId as string, headers };
}

/** A transport refusal: exact status, a JSON-RPC error body (id null) naming the reasonCode. */
export function expectRefusal(answer: RawAnswer, status: number, reasonCode: string): void {
  expect({ status: answer.status, reasonCode: answer.body?.error?.data?.reasonCode }).toEqual({
    status,
    reasonCode,
  });
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.body).toMatchObject({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: expect.any(Number),
      message: expect.stringMatching(new RegExp(`^${reasonCode}`)),
    },
  });
}

export function toolsList(id: number | string = 1) {
  return { jsonrpc: '2.0', id, method: 'tools/list', params: {} };
}

export function toolsCall(
  name: string,
  args: Record<string, unknown> = {},
  id: number | string = 1,
) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

// ---------------------------------------------------------------------------------------------
// The relay upstream.

/** A JSON Schema 2020-12 output schema (keywords the SDK's own zod-based tools never produce). */
export const OUTPUT_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { label: { type: 'string', minLength: 1 } },
  properties: {
    label: { $ref: '#/$defs/label' },
    pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
    kinds: {
      type: 'array',
      items: { type: 'string' },
      minContains: 1,
      contains: { const: 'text' },
    },
  },
  dependentRequired: { pair: ['label'] },
  required: ['label', 'pair', 'kinds'],
  unevaluatedProperties: false,
};

export const INPUT_SCHEMA_2020_12 = {
  type: 'object',
  properties: {
    choice: { anyOf: [{ const: 'a' }, { const: 'b' }] },
    tags: { type: 'array', prefixItems: [{ type: 'string' }], unevaluatedItems: false },
  },
  unevaluatedProperties: false,
};

/** A 1×1 PNG and a few bytes of WAV header, base64 (content a proxy must not touch). */
const PNG_1x1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const WAV_BYTES = Buffer.from('RIFF$\u0000\u0000\u0000WAVEfmt ').toString('base64');

export const ALL_CONTENT_RESULT: CallToolResult = {
  content: [
    { type: 'text', text: 'plain text', annotations: { audience: ['user'], priority: 0.5 } },
    { type: 'image', data: PNG_1x1, mimeType: 'image/png' },
    { type: 'audio', data: WAV_BYTES, mimeType: 'audio/wav' },
    {
      type: 'resource',
      resource: { uri: 'file:///notes/a.txt', mimeType: 'text/plain', text: 'embedded text' },
    },
    {
      type: 'resource',
      resource: { uri: 'file:///blob.bin', mimeType: 'application/octet-stream', blob: PNG_1x1 },
    },
    { type: 'resource_link', uri: 'file:///notes/b.txt', name: 'b.txt', mimeType: 'text/plain' },
  ],
  structuredContent: { label: 'all', pair: ['x', 1], kinds: ['text', 'image'] },
  _meta: { 'example.com/trace': 'kept' },
};

export const TOOL_ERROR_RESULT: CallToolResult = {
  isError: true,
  content: [{ type: 'text', text: 'the tool failed on purpose' }],
};

export const RELAY_TOOLS: Tool[] = [
  {
    name: 'progress',
    description: 'Sends progress (with the caller’s token) and log messages, then answers.',
    inputSchema: { type: 'object', properties: { steps: { type: 'integer', minimum: 0 } } },
  },
  {
    name: 'sample',
    description: 'Asks the client to sample (sampling/createMessage) and returns its answer.',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } } },
  },
  {
    name: 'elicit',
    description: 'Asks the user through the client (elicitation/create) and returns the answer.',
    inputSchema: { type: 'object' },
  },
  {
    name: 'all_content',
    description: 'Returns every content type.',
    inputSchema: INPUT_SCHEMA_2020_12 as Tool['inputSchema'],
    outputSchema: OUTPUT_SCHEMA_2020_12 as Tool['outputSchema'],
    annotations: { readOnlyHint: true, title: 'All content' },
  },
  {
    name: 'tool_error',
    description: 'Returns isError: true.',
    inputSchema: { type: 'object' },
  },
];

export const ELICITATION_SCHEMA = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, title: 'Name', minLength: 1 },
    size: {
      type: 'string' as const,
      enum: ['s', 'm', 'l'],
      enumNames: ['Small', 'Medium', 'Large'],
    },
    confirm: { type: 'boolean' as const, default: false },
  },
  required: ['name'],
};

export const RESOURCES = [{ uri: 'file:///notes/a.txt', name: 'a.txt', mimeType: 'text/plain' }];
export const PROMPTS = [{ name: 'summarize', description: 'Summarize a text.' }];

/** One HTTP request the relay upstream received. */
export interface RelayRequest {
  readonly httpMethod: string;
  /** JSON-RPC method, or `response` for a POSTed answer to one of its own requests. */
  readonly rpcMethod: string | undefined;
  readonly sessionId: string | undefined;
}

export interface RelayUpstream {
  readonly url: string;
  /** Tool calls per tool name. */
  readonly calls: Map<string, number>;
  readonly log: readonly RelayRequest[];
  /** What the client answered to the upstream's sampling / elicitation requests (or the error). */
  readonly answers: unknown[];
  /** Resolves once `count` GET streams were opened (the proxy listens for its client). */
  waitForGets(count: number): Promise<void>;
  /** Sends notifications/tools/list_changed on every live session, outside any request. */
  announceToolListChanged(): Promise<void>;
  close(): Promise<void>;
}

function rpcMethodOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as { method?: unknown; result?: unknown; error?: unknown };
  if (typeof message.method === 'string') return message.method;
  return 'result' in message || 'error' in message ? 'response' : undefined;
}

function buildRelayServer(
  calls: Map<string, number>,
  answers: unknown[],
  activity: EventEmitter,
): Server {
  const server = new Server(
    { name: 'relay-upstream', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        logging: {},
        resources: { listChanged: true },
        prompts: {},
      },
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: RELAY_TOOLS }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
    contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: 'contents' }],
  }));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const name = request.params.name;
      calls.set(name, (calls.get(name) ?? 0) + 1);
      activity.emit('change');
      const related = { relatedRequestId: extra.requestId };
      switch (name) {
        case 'progress': {
          const token = request.params._meta?.progressToken;
          const steps = Number(request.params.arguments?.steps ?? 2);
          for (let step = 1; step <= steps; step++) {
            if (token !== undefined) {
              await extra.sendNotification({
                method: 'notifications/progress',
                params: {
                  progressToken: token,
                  progress: step,
                  total: steps,
                  message: `step ${step}`,
                },
              });
            }
            await extra.sendNotification({
              method: 'notifications/message',
              params: { level: 'info', logger: 'relay', data: `log ${step}` },
            });
          }
          return { content: [{ type: 'text', text: `done after ${steps}` }] };
        }
        case 'sample': {
          try {
            const sampled = await server.createMessage(
              {
                messages: [
                  {
                    role: 'user',
                    content: { type: 'text', text: String(request.params.arguments?.prompt ?? '') },
                  },
                ],
                maxTokens: 50,
              },
              related,
            );
            answers.push(sampled);
            return { content: [{ type: 'text', text: JSON.stringify(sampled) }] };
          } catch (error) {
            answers.push({ error: (error as Error).message });
            return { isError: true, content: [{ type: 'text', text: (error as Error).message }] };
          }
        }
        case 'elicit': {
          const elicited = await server.elicitInput(
            { mode: 'form', message: 'Who are you?', requestedSchema: ELICITATION_SCHEMA },
            related,
          );
          answers.push(elicited);
          return { content: [{ type: 'text', text: JSON.stringify(elicited) }] };
        }
        case 'all_content':
          return ALL_CONTENT_RESULT;
        case 'tool_error':
          return TOOL_ERROR_RESULT;
        default:
          return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}` }] };
      }
    },
  );
  return server;
}

export async function startRelayUpstream(): Promise<RelayUpstream> {
  const calls = new Map<string, number>();
  const answers: unknown[] = [];
  const log: RelayRequest[] = [];
  const activity = new EventEmitter();
  activity.setMaxListeners(0);
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  const waitFor = async (check: () => boolean) => {
    while (!check()) await once(activity, 'change');
  };

  const readJson = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (chunks.length === 0) return undefined;
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  };

  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const header = req.headers['mcp-session-id'];
      const sessionId = typeof header === 'string' ? header : undefined;
      log.push({ httpMethod: req.method ?? '', rpcMethod: rpcMethodOf(body), sessionId });
      activity.emit('change');
      const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (existing) {
        await existing.transport.handleRequest(req, res, body);
        return;
      }
      if (sessionId !== undefined || rpcMethodOf(body) !== 'initialize') {
        res.writeHead(sessionId === undefined ? 400 : 404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'no' } }),
        );
        return;
      }
      const server = buildRelayServer(calls, answers, activity);
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, server });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error');
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    log,
    answers,
    waitForGets: (count) =>
      waitFor(() => log.filter((entry) => entry.httpMethod === 'GET').length >= count),
    async announceToolListChanged() {
      for (const { server } of sessions.values()) await server.sendToolListChanged();
    },
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      for (const { transport, server } of all) {
        await transport.close();
        await server.close();
      }
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
