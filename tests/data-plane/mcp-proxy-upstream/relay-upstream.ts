// An SDK MCP server (McpServer + StreamableHTTPServerTransport, stateful, SSE answers) whose tools
// do what the proxy's upstream sessions must relay: progress with the caller's progressToken, log
// messages and sampling/elicitation requests on the call's own stream, notifications on the
// standalone GET stream, and (with an event store) a request stream that the server closes
// mid-call so the client must resume it with Last-Event-ID.
//
// Tools:
//   ask({ prompt })        progress 1 → log message → sampling/createMessage → progress 2 → the
//                          sampled text as the result
//   elicit({})             elicitation/create (form) → the answer's content as JSON text
//   announce({})           notifications/tools/list_changed, outside any request (GET stream)
//   drop({})               progress 1, closes its own SSE stream (event store only), progress 2,
//                          then answers 'resumed'
//   ticks({ count, everyMs }) `count` progress notifications `everyMs` apart, then 'ticked'
//   big({ bytes })         a text result of `bytes` characters
//   block({})              answers only when cancelled
import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  type EventStore,
  StreamableHTTPServerTransport,
} from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** The smallest event store that replays a stream after an event id (ids: `<stream>|<n>`). */
export class MemoryEventStore implements EventStore {
  readonly #events: { id: string; streamId: string; message: JSONRPCMessage }[] = [];
  #next = 0;

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}|${++this.#next}`;
    this.#events.push({ id, streamId, message });
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.find((event) => event.id === eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const index = this.#events.findIndex((event) => event.id === lastEventId);
    const streamId = this.#events[index]?.streamId ?? '';
    for (const event of this.#events.slice(index + 1)) {
      // Priming events are stored as {}: not messages to replay.
      if (event.streamId === streamId && 'jsonrpc' in event.message) {
        await send(event.id, event.message);
      }
    }
    return streamId;
  }
}

export interface RelayUpstreamRequest {
  readonly httpMethod: string;
  readonly sessionId: string | undefined;
  readonly protocolVersion: string | undefined;
  readonly lastEventId: string | undefined;
}

export interface RelayUpstream {
  readonly url: string;
  readonly log: readonly RelayUpstreamRequest[];
  readonly liveSessions: readonly string[];
  /** Resolves when a standalone GET stream has been answered `count` times in all. */
  waitForGetStreams(count: number): Promise<void>;
  /** Closes the standalone GET stream of every session (the client must reconnect). */
  dropGetStreams(): void;
  close(): Promise<void>;
}

export interface RelayUpstreamOptions {
  /** Resumable streams (MemoryEventStore); `retryInterval` is sent in the priming event. */
  readonly eventStore?: boolean;
  readonly retryInterval?: number;
}

function buildServer(): McpServer {
  const server = new McpServer(
    { name: 'relay-upstream', version: '1.0.0' },
    { capabilities: { logging: {} } },
  );
  server.registerTool('ask', { inputSchema: { prompt: z.string() } }, async ({ prompt }, extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: 1, total: 2 },
      });
    }
    await extra.sendNotification({
      method: 'notifications/message',
      params: { level: 'info', data: `asking ${prompt}` },
    });
    const sampled = await server.server.createMessage(
      {
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 10,
      },
      { relatedRequestId: extra.requestId },
    );
    if (progressToken !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: 2, total: 2 },
      });
    }
    const text = sampled.content.type === 'text' ? sampled.content.text : '?';
    return { content: [{ type: 'text', text }] };
  });
  server.registerTool('elicit', {}, async (extra) => {
    const answer = await server.server.elicitInput(
      {
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      },
      { relatedRequestId: extra.requestId },
    );
    return { content: [{ type: 'text', text: JSON.stringify(answer.content ?? null) }] };
  });
  server.registerTool('announce', {}, async () => {
    server.sendToolListChanged();
    return { content: [{ type: 'text', text: 'announced' }] };
  });
  server.registerTool('drop', {}, async (extra) => {
    const progressToken = extra._meta?.progressToken ?? 'drop';
    await extra.sendNotification({
      method: 'notifications/progress',
      params: { progressToken, progress: 1 },
    });
    if (extra.closeSSEStream === undefined) throw new Error('no event store');
    extra.closeSSEStream();
    await extra.sendNotification({
      method: 'notifications/progress',
      params: { progressToken, progress: 2 },
    });
    return { content: [{ type: 'text', text: 'resumed' }] };
  });
  server.registerTool(
    'ticks',
    { inputSchema: { count: z.number().int(), everyMs: z.number().int() } },
    async ({ count, everyMs }, extra) => {
      for (let i = 1; i <= count; i++) {
        await new Promise((resolve) => setTimeout(resolve, everyMs));
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: extra._meta?.progressToken ?? 'ticks', progress: i },
        });
      }
      return { content: [{ type: 'text', text: 'ticked' }] };
    },
  );
  server.registerTool('big', { inputSchema: { bytes: z.number().int() } }, async ({ bytes }) => ({
    content: [{ type: 'text', text: 'x'.repeat(bytes) }],
  }));
  server.registerTool('block', {}, async (extra) => {
    await new Promise<void>((resolve) => {
      if (extra.signal.aborted) resolve();
      extra.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    return { content: [{ type: 'text', text: 'released' }] };
  });
  return server;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export async function startRelayUpstream(
  options: RelayUpstreamOptions = {},
): Promise<RelayUpstream> {
  const sessions = new Map<
    string,
    { transport: StreamableHTTPServerTransport; server: McpServer }
  >();
  const log: RelayUpstreamRequest[] = [];
  const activity = new EventEmitter();
  activity.setMaxListeners(0);
  let getStreams = 0;

  // The SDK reads and parses the body itself.
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const sessionId = header(req, 'mcp-session-id');
    const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (existing) {
      if (req.method === 'GET') {
        const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
        res.writeHead = ((...args: unknown[]) => {
          const result = writeHead(...args);
          if (res.statusCode === 200) {
            getStreams++;
            activity.emit('change');
          }
          return result;
        }) as ServerResponse['writeHead'];
      }
      await existing.transport.handleRequest(req, res);
      return;
    }
    if (sessionId !== undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
      return;
    }
    const server = buildServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      ...(options.eventStore ? { eventStore: new MemoryEventStore() } : {}),
      ...(options.retryInterval === undefined ? {} : { retryInterval: options.retryInterval }),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  const http: Server = createServer((req, res) => {
    void (async () => {
      log.push({
        httpMethod: req.method ?? '',
        sessionId: header(req, 'mcp-session-id'),
        protocolVersion: header(req, 'mcp-protocol-version'),
        lastEventId: header(req, 'last-event-id'),
      });
      await handle(req, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error');
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    get liveSessions() {
      return [...sessions.keys()];
    },
    async waitForGetStreams(count) {
      while (getStreams < count) await once(activity, 'change');
    },
    dropGetStreams() {
      for (const { transport } of sessions.values()) transport.closeStandaloneSSEStream();
    },
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      // Closing a server closes its transport too.
      await Promise.all(all.map(({ server }) => server.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
