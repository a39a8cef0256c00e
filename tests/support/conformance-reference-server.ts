// Our own MCP server for the official conformance suite's server scenarios
// (@modelcontextprotocol/conformance, `conformance list --server`): the tools, resources, prompts and
// transport behaviour those scenarios exercise, written from the checks the scenarios make. It is the
// upstream of tests/mcp-proxy/conformance.test.ts, whose proof is that every scenario passing against
// this server directly also passes through the MCP proxy.
//
//   node --import tsx tests/support/conformance-reference-server.ts   (PORT=0 by default)
//   → prints `listening http://127.0.0.1:<port>/mcp` on stdout once it accepts connections
//
// It runs on the official SDK's low-level `Server` behind `StreamableHTTPServerTransport` on a plain
// node:http server. Not McpServer: McpServer converts Zod input schemas to draft-07 JSON Schema,
// while the json-schema-2020-12 scenario checks that a 2020-12 schema (`$schema`, `$defs`,
// `additionalProperties`) is listed exactly as the server declared it; here every tool declares its
// JSON Schema verbatim, which is also what a transparency upstream should do.
//
// Invariants:
// - Stateful: initialize opens a session (Mcp-Session-Id), each with its own Server and transport;
//   other requests need a live session id (400 without, 404 unknown).
// - Resumable: an in-memory event store keeps every event sent on a session's streams, so a client
//   reconnecting with Last-Event-ID gets what it missed (test_reconnection closes its own stream
//   mid-call to force that, when the client's protocol version allows it).
// - DNS-rebinding protection: a request whose Host, or Origin when present, is not a loopback name
//   (localhost, 127.0.0.1, [::1], any port) is refused with 403 before any MCP handling.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  type ElicitRequestFormParams,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  type GetPromptResult,
  isInitializeRequest,
  type JSONRPCMessage,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  McpError,
  type Prompt,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
  type ServerNotification,
  type ServerRequest,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  type Tool,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const MCP_PATH = '/mcp';
const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

// A 1×1 red PNG, and a WAV of 0.1 s of silence (8 kHz, 8-bit mono) built below.
const RED_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
const SILENT_WAV = buildSilentWav(8000, 800);

function buildSilentWav(sampleRate: number, samples: number): string {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + samples, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate, 28); // byte rate: 1 byte per sample
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(samples, 40);
  // 8-bit PCM is unsigned: 128 is silence.
  return Buffer.concat([header, Buffer.alloc(samples, 128)]).toString('base64');
}

// ---------------------------------------------------------------------------------------------
// Event store: every event of every stream, in order, so a stream can be replayed after an id.

interface StoredEvent {
  readonly streamId: string;
  readonly message: JSONRPCMessage;
}

function createMemoryEventStore(): EventStore {
  const events = new Map<string, StoredEvent>(); // insertion order is send order
  let sequence = 0;
  return {
    async storeEvent(streamId, message) {
      sequence += 1;
      const eventId = `${streamId}:${sequence}`;
      events.set(eventId, { streamId, message });
      return eventId;
    },
    async getStreamIdForEventId(eventId) {
      return events.get(eventId)?.streamId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const last = events.get(lastEventId);
      if (!last) throw new Error(`unknown event id ${lastEventId}`);
      let after = false;
      for (const [eventId, event] of events) {
        if (eventId === lastEventId) {
          after = true;
          continue;
        }
        // Priming events are stored as `{}` only to own an id; there is nothing to resend.
        if (!after || event.streamId !== last.streamId || !('jsonrpc' in event.message)) continue;
        await send(eventId, event.message);
      }
      return last.streamId;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Per-session state and the catalogue (tools, resources, prompts) every session serves.

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

interface SessionState {
  /** Unset until the client sends logging/setLevel: then everything is sent. */
  logLevel: LoggingLevel | undefined;
  readonly subscriptions: Set<string>;
}

interface ToolContext {
  readonly server: Server;
  readonly session: SessionState;
  readonly extra: Extra;
}

interface ToolEntry {
  readonly definition: Tool;
  run(args: Record<string, unknown>, context: ToolContext): Promise<CallToolResult>;
}

const LOG_SEVERITY = LoggingLevelSchema.options;

function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

const NO_ARGUMENTS: Tool['inputSchema'] = { type: 'object', properties: {} };

async function log(context: ToolContext, level: LoggingLevel, data: string): Promise<void> {
  const threshold = context.session.logLevel;
  if (threshold && LOG_SEVERITY.indexOf(level) < LOG_SEVERITY.indexOf(threshold)) return;
  // Sent as part of the call (its event stream), not on the session's standalone stream.
  await context.extra.sendNotification({
    method: 'notifications/message',
    params: { level, logger: 'conformance-reference-server', data },
  });
}

async function elicit(
  context: ToolContext,
  message: string,
  requestedSchema: ElicitRequestFormParams['requestedSchema'],
): Promise<CallToolResult> {
  if (!context.server.getClientCapabilities()?.elicitation) {
    return {
      isError: true,
      content: [{ type: 'text', text: 'the client does not support elicitation' }],
    };
  }
  const answer = await context.extra.sendRequest(
    { method: 'elicitation/create', params: { message, requestedSchema } },
    ElicitResultSchema,
  );
  return textResult(
    `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`,
  );
}

const TOOLS: readonly ToolEntry[] = [
  {
    definition: {
      name: 'test_simple_text',
      description: 'Answers with one text block',
      inputSchema: NO_ARGUMENTS,
    },
    run: async () => textResult('This is a simple text response for testing.'),
  },
  {
    definition: {
      name: 'test_image_content',
      description: 'Answers with a 1x1 PNG image',
      inputSchema: NO_ARGUMENTS,
    },
    run: async () => ({ content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }] }),
  },
  {
    definition: {
      name: 'test_audio_content',
      description: 'Answers with a short WAV clip of silence',
      inputSchema: NO_ARGUMENTS,
    },
    run: async () => ({ content: [{ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' }] }),
  },
  {
    definition: {
      name: 'test_embedded_resource',
      description: 'Answers with an embedded text resource',
      inputSchema: NO_ARGUMENTS,
    },
    run: async () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  },
  {
    definition: {
      name: 'test_multiple_content_types',
      description: 'Answers with text, an image and an embedded resource',
      inputSchema: NO_ARGUMENTS,
    },
    run: async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  },
  {
    definition: {
      name: 'test_tool_with_logging',
      description: 'Sends three info log messages while it runs',
      inputSchema: NO_ARGUMENTS,
    },
    async run(_args, context) {
      await log(context, 'info', 'Tool execution started');
      await sleep(50);
      await log(context, 'info', 'Tool processing data');
      await sleep(50);
      await log(context, 'info', 'Tool execution completed');
      return textResult('Logging tool finished: three messages sent');
    },
  },
  {
    definition: {
      name: 'test_error_handling',
      description: 'Always fails with a tool error result',
      inputSchema: NO_ARGUMENTS,
    },
    run: async () => ({
      isError: true,
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    }),
  },
  {
    definition: {
      name: 'test_tool_with_progress',
      description: 'Reports progress 0, 50 and 100 of 100 when given a progress token',
      inputSchema: NO_ARGUMENTS,
    },
    async run(_args, { extra }) {
      const progressToken = extra._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (progress > 0) await sleep(50);
        if (progressToken === undefined) continue;
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100 },
        });
      }
      return textResult('Progress tool finished');
    },
  },
  {
    definition: {
      name: 'test_sampling',
      description: 'Asks the client for an LLM completion of the given prompt',
      inputSchema: {
        type: 'object',
        properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
        required: ['prompt'],
      },
    },
    async run(args, context) {
      if (!context.server.getClientCapabilities()?.sampling) {
        return {
          isError: true,
          content: [{ type: 'text', text: 'the client does not support sampling' }],
        };
      }
      const answer = await context.extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: {
            messages: [
              { role: 'user', content: { type: 'text', text: String(args.prompt ?? '') } },
            ],
            maxTokens: 100,
          },
        },
        CreateMessageResultSchema,
      );
      const content = Array.isArray(answer.content) ? answer.content : [answer.content];
      const text = content
        .map((block) => ('text' in block ? block.text : `[${block.type}]`))
        .join('');
      return textResult(`LLM response: ${text}`);
    },
  },
  {
    definition: {
      name: 'test_elicitation',
      description: 'Asks the user (through the client) for a username and an email address',
      inputSchema: {
        type: 'object',
        properties: { message: { type: 'string', description: 'The message to show the user' } },
        required: ['message'],
      },
    },
    run: (args, context) =>
      elicit(context, String(args.message ?? ''), {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      }),
  },
  {
    definition: {
      name: 'test_elicitation_sep1034_defaults',
      description: 'Elicits a form whose fields of every primitive type carry defaults (SEP-1034)',
      inputSchema: NO_ARGUMENTS,
    },
    run: (_args, context) =>
      elicit(context, 'Please review your profile (every field has a default)', {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'Full name', default: 'John Doe' },
          age: { type: 'integer', description: 'Age in years', default: 30 },
          score: { type: 'number', description: 'Score', default: 95.5 },
          status: {
            type: 'string',
            description: 'Account status',
            enum: ['active', 'inactive', 'pending'],
            default: 'active',
          },
          verified: { type: 'boolean', description: 'Verified account', default: true },
        },
      }),
  },
  {
    definition: {
      name: 'test_elicitation_sep1330_enums',
      description: 'Elicits a form with each enum variant of SEP-1330',
      inputSchema: NO_ARGUMENTS,
    },
    run: (_args, context) =>
      elicit(context, 'Please pick your options', {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
      }),
  },
  {
    definition: {
      name: 'json_schema_2020_12_tool',
      description: 'Declares a JSON Schema 2020-12 input schema ($schema, $defs, $ref)',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: {
          address: {
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
          },
        },
        properties: {
          name: { type: 'string' },
          address: { $ref: '#/$defs/address' },
        },
        additionalProperties: false,
      },
    },
    run: async (args) => textResult(`Received: ${JSON.stringify(args)}`),
  },
  {
    definition: {
      name: 'test_reconnection',
      description: 'Closes its own event stream mid-call, then answers: the client must resume',
      inputSchema: NO_ARGUMENTS,
    },
    async run(_args, { extra }) {
      // Only offered when the client can resume (event store + protocol 2025-11-25 or later);
      // otherwise the answer simply arrives on the open stream.
      if (extra.closeSSEStream) {
        extra.closeSSEStream();
        await sleep(100);
      }
      return textResult('Reconnection tool finished');
    },
  },
];

const TOOLS_BY_NAME = new Map(TOOLS.map((tool) => [tool.definition.name, tool]));

const TEXT_RESOURCE = 'test://static-text';
const BINARY_RESOURCE = 'test://static-binary';
const WATCHED_RESOURCE = 'test://watched-resource';
const DATA_TEMPLATE = 'test://template/{id}/data';
const DATA_TEMPLATE_PATTERN = /^test:\/\/template\/([^/]+)\/data$/;

const RESOURCES: readonly Resource[] = [
  {
    uri: TEXT_RESOURCE,
    name: 'static-text',
    description: 'A fixed text resource',
    mimeType: 'text/plain',
  },
  {
    uri: BINARY_RESOURCE,
    name: 'static-binary',
    description: 'A fixed PNG image',
    mimeType: 'image/png',
  },
  {
    uri: WATCHED_RESOURCE,
    name: 'watched-resource',
    description: 'A resource clients may subscribe to',
    mimeType: 'text/plain',
  },
];

function readResource(uri: string): ReadResourceResult {
  if (uri === TEXT_RESOURCE) {
    return {
      contents: [
        { uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
      ],
    };
  }
  if (uri === BINARY_RESOURCE) {
    return { contents: [{ uri, mimeType: 'image/png', blob: RED_PIXEL_PNG }] };
  }
  if (uri === WATCHED_RESOURCE) {
    return {
      contents: [{ uri, mimeType: 'text/plain', text: 'The watched resource has not changed.' }],
    };
  }
  const id = DATA_TEMPLATE_PATTERN.exec(uri)?.[1];
  if (id !== undefined) {
    const data = { id: decodeURIComponent(id), templateTest: true, data: `Data for ID: ${id}` };
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(data) }] };
  }
  throw new McpError(ErrorCode.InvalidParams, `resource ${uri} does not exist`);
}

const PROMPTS: readonly Prompt[] = [
  { name: 'test_simple_prompt', description: 'A prompt without arguments' },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt that quotes its two arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds the resource it is given',
    arguments: [
      { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
    ],
  },
  { name: 'test_prompt_with_image', description: 'A prompt that carries an image' },
];

function getPrompt(name: string, args: Record<string, string>): GetPromptResult {
  switch (name) {
    case 'test_simple_prompt':
      return {
        messages: [
          { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
        ],
      };
    case 'test_prompt_with_arguments':
      return {
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: `Prompt with arguments: arg1='${args.arg1 ?? ''}', arg2='${args.arg2 ?? ''}'`,
            },
          },
        ],
      };
    case 'test_prompt_with_embedded_resource':
      return {
        messages: [
          {
            role: 'user',
            content: {
              type: 'resource',
              resource: {
                uri: args.resourceUri ?? 'test://example-resource',
                mimeType: 'text/plain',
                text: 'Embedded resource content for testing.',
              },
            },
          },
          {
            role: 'user',
            content: { type: 'text', text: 'Please process the embedded resource above.' },
          },
        ],
      };
    case 'test_prompt_with_image':
      return {
        messages: [
          { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
          { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
        ],
      };
    default:
      throw new McpError(ErrorCode.InvalidParams, `prompt ${name} does not exist`);
  }
}

// Candidate values per prompt argument for completion/complete, filtered by the typed prefix.
const COMPLETIONS: Readonly<Record<string, readonly string[]>> = {
  arg1: ['paris', 'park', 'party', 'test', 'testing'],
  arg2: ['world', 'word', 'work'],
};

/** One MCP server per session: the catalogue above, with the session's log level and subscriptions. */
function buildSessionServer(): Server {
  const session: SessionState = { logLevel: undefined, subscriptions: new Set() };
  const server = new Server(
    { name: 'agent-gateway-conformance-reference', version: '1.0.0' },
    {
      capabilities: {
        tools: {},
        resources: { subscribe: true },
        prompts: {},
        logging: {},
        completions: {},
      },
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((tool) => tool.definition),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const tool = TOOLS_BY_NAME.get(request.params.name);
    if (!tool)
      throw new McpError(ErrorCode.InvalidParams, `tool ${request.params.name} does not exist`);
    return tool.run(request.params.arguments ?? {}, { server, session, extra });
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [...RESOURCES] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: DATA_TEMPLATE,
        name: 'template-data',
        description: 'JSON data for the id in the URI',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    readResource(request.params.uri),
  );
  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    session.subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    session.subscriptions.delete(request.params.uri);
    return {};
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [...PROMPTS] }));
  server.setRequestHandler(GetPromptRequestSchema, (request) =>
    getPrompt(request.params.name, request.params.arguments ?? {}),
  );

  server.setRequestHandler(CompleteRequestSchema, (request) => {
    const { ref, argument } = request.params;
    const candidates = ref.type === 'ref/prompt' ? (COMPLETIONS[argument.name] ?? []) : [];
    const values = candidates.filter((value) => value.startsWith(argument.value));
    return { completion: { values, total: values.length, hasMore: false } };
  });

  // Replaces the SDK's own handler: the level is this session's, read by log() above.
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    session.logLevel = request.params.level;
    return {};
  });
  return server;
}

// ---------------------------------------------------------------------------------------------
// HTTP: origin checks, session routing, one transport per session.

function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  try {
    return LOOPBACK_HOSTNAMES.has(new URL(`http://${host}`).hostname);
  } catch {
    return false;
  }
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      LOOPBACK_HOSTNAMES.has(url.hostname)
    );
  } catch {
    return false;
  }
}

function answerError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function isInitialization(body: unknown): boolean {
  return Array.isArray(body)
    ? body.some((message) => isInitializeRequest(message))
    : isInitializeRequest(body);
}

export interface ReferenceServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startReferenceServer(port = 0): Promise<ReferenceServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function openSession(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ): Promise<void> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      // Per session, so a session's events go away with it.
      eventStore: createMemoryEventStore(),
      retryInterval: 500,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await buildSessionServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== MCP_PATH) {
      answerError(res, 404, ErrorCode.InvalidRequest, `no MCP endpoint at ${path}`);
      return;
    }
    const origin = req.headers.origin;
    if (!isLoopbackHost(req.headers.host) || (origin !== undefined && !isLoopbackOrigin(origin))) {
      answerError(res, 403, ErrorCode.InvalidRequest, 'Host or Origin is not a loopback address');
      return;
    }

    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    if (sessionId !== undefined) {
      const transport = sessions.get(sessionId);
      if (!transport) {
        answerError(res, 404, ErrorCode.InvalidRequest, `session ${sessionId} does not exist`);
        return;
      }
      await transport.handleRequest(req, res);
      return;
    }

    if (req.method !== 'POST') {
      answerError(res, 400, ErrorCode.InvalidRequest, 'an Mcp-Session-Id header is required');
      return;
    }
    let body: unknown;
    try {
      body = await readJsonBody(req);
    } catch {
      answerError(res, 400, ErrorCode.ParseError, 'the body is not JSON');
      return;
    }
    if (!isInitialization(body)) {
      answerError(res, 400, ErrorCode.InvalidRequest, 'an Mcp-Session-Id header is required');
      return;
    }
    await openSession(req, res, body);
  }

  const httpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else answerError(res, 500, ErrorCode.InternalError, String(error));
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(port, '127.0.0.1', resolve));
  const { port: bound } = httpServer.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${bound}${MCP_PATH}`,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await startReferenceServer(Number(process.env.PORT ?? 0));
  process.stdout.write(`listening ${server.url}\n`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
