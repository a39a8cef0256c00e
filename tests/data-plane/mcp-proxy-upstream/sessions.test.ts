// The MCP proxy's upstream sessions against real SDK servers on loopback: opening in every
// transport configuration, relaying what belongs to one call on that call, the standalone GET
// stream, resumption, session end, limits and close.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type UpstreamSession,
  type UpstreamSessionConfig,
  UpstreamSessions,
} from '../../../data-plane/mcp-proxy/upstream/index.js';
import type { UpstreamError } from '../../../data-plane/upstream/errors.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../../../data-plane/upstream/json-rpc.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { type RelayUpstream, startRelayUpstream } from './relay-upstream.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function initialize(
  protocolVersion = '2025-11-25',
  id: string | number = 'init-1',
): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion,
      capabilities: { sampling: {}, elicitation: { form: {} } },
      clientInfo: { name: 'downstream-client', version: '9.9.9' },
    },
  };
}

function configFor(
  url: string,
  overrides: Partial<UpstreamSessionConfig> = {},
): UpstreamSessionConfig {
  return {
    target: { serverKey: `t1/${url}`, url },
    connectTimeoutMs: 2_000,
    readTimeoutMs: 5_000,
    maxMessageBytes: 64 * 1024,
    reconnect: { initialDelayMs: 5, maxDelayMs: 50, maxAttempts: 3 },
    ...overrides,
  };
}

function sessions(options?: ConstructorParameters<typeof UpstreamSessions>[0]): UpstreamSessions {
  const pool = new UpstreamSessions(options);
  cleanups.push(() => pool.close());
  return pool;
}

async function mcpUpstream(responseMode: 'json' | 'sse', stateful: boolean): Promise<McpUpstream> {
  const upstream = await startMcpUpstream({ responseMode, stateful, blockTool: true });
  cleanups.push(() => upstream.close());
  return upstream;
}

async function relayUpstream(
  options?: Parameters<typeof startRelayUpstream>[0],
): Promise<RelayUpstream> {
  const upstream = await startRelayUpstream(options);
  cleanups.push(() => upstream.close());
  return upstream;
}

async function openSession(
  owner: UpstreamSessions,
  url: string,
  overrides: Partial<UpstreamSessionConfig> = {},
  protocolVersion?: string,
): Promise<UpstreamSession> {
  const { session } = await owner.open(configFor(url, overrides), initialize(protocolVersion));
  if (session === undefined) throw new Error('initialize failed');
  await session.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return session;
}

function call(
  id: number,
  name: string,
  args: Record<string, unknown> = {},
  progressToken?: string,
): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      ...(progressToken === undefined ? {} : { _meta: { progressToken } }),
    },
  };
}

const INITIALIZE_RESULT =
  '{"jsonrpc":"2.0","id":"init-1","result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"raw","version":"1"}}}';

/** A hand-made upstream for what SDK servers never do; it answers initialize itself. */
async function rawUpstream(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST' && req.headers['mcp-session-id'] === undefined) {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' });
        res.end(INITIALIZE_RESULT);
        return;
      }
      handle(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    return error as UpstreamError;
  }
  throw new Error('expected a failure');
}

describe('open', () => {
  for (const responseMode of ['json', 'sse'] as const) {
    for (const stateful of [true, false]) {
      it(`sends the client's initialize unchanged and keeps the session (${responseMode}, ${stateful ? 'stateful' : 'stateless'})`, async () => {
        const upstream = await mcpUpstream(responseMode, stateful);
        const owner = sessions();
        const { session, response } = await owner.open(
          configFor(upstream.url, { authorization: async () => 'minted-token' }),
          initialize('2025-06-18', 7),
        );
        expect(response).toMatchObject({
          jsonrpc: '2.0',
          id: 7,
          result: { protocolVersion: '2025-06-18' },
        });
        expect(session?.protocolVersion).toBe('2025-06-18');
        expect(session?.sessionId === undefined).toBe(!stateful);
        await session!.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        const answer = await session!.request(call(8, 'echo', { text: 'hi' }));
        expect(answer).toEqual({
          jsonrpc: '2.0',
          id: 8,
          result: {
            content: [{ type: 'text', text: '{"text":"hi"}' }],
            structuredContent: { text: 'hi' },
          },
        });
        const [init, initialized, toolCall] = upstream.log;
        expect(init).toMatchObject({
          rpcMethod: 'initialize',
          sessionId: undefined,
          protocolVersion: undefined,
        });
        expect(initialized?.rpcMethod).toBe('notifications/initialized');
        expect(toolCall).toMatchObject({
          rpcMethod: 'tools/call',
          sessionId: session!.sessionId,
          protocolVersion: '2025-06-18',
          authorization: 'Bearer minted-token',
        });
        // The session sends no initialized notification of its own.
        expect(
          upstream.log.filter((entry) => entry.rpcMethod === 'notifications/initialized'),
        ).toHaveLength(1);
      });
    }
  }

  it('returns an initialize error as the upstream sent it, without a session', async () => {
    const upstream = await mcpUpstream('json', true);
    const owner = sessions();
    const broken = { ...initialize(), params: { protocolVersion: 42 } };
    const { session, response } = await owner.open(configFor(upstream.url), broken);
    expect(session).toBeUndefined();
    // The SDK rejects the malformed initialize before it knows the id (HTTP 400, id null).
    expect(response).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: expect.any(Number) },
    });
  });

  it('sends the older protocol version a downstream request carried', async () => {
    const upstream = await mcpUpstream('sse', true);
    const session = await openSession(sessions(), upstream.url);
    await session.request(call(2, 'echo'), { protocolVersion: '2025-03-26' });
    expect(upstream.log.at(-1)?.protocolVersion).toBe('2025-03-26');
  });
});

describe('a call and what belongs to it', () => {
  it('relays progress, log and a sampling request on the call, answered through send before the result', async () => {
    const upstream = await relayUpstream();
    const session = await openSession(sessions(), upstream.url);
    const seen: JsonRpcMessage[] = [];
    const result = await session.request(call(3, 'ask', { prompt: 'colour?' }, 'tok-3'), {
      onMessage: (message) => {
        seen.push(message);
        if ('method' in message && message.method === 'sampling/createMessage' && 'id' in message) {
          void session.send({
            jsonrpc: '2.0',
            id: message.id,
            result: { role: 'assistant', model: 'm', content: { type: 'text', text: 'blue' } },
          });
        }
      },
    });
    expect(seen.map((message) => ('method' in message ? message.method : 'response'))).toEqual([
      'notifications/progress',
      'notifications/message',
      'sampling/createMessage',
      'notifications/progress',
    ]);
    expect(seen[0]).toMatchObject({ params: { progressToken: 'tok-3', progress: 1 } });
    expect(result).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: { content: [{ type: 'text', text: 'blue' }] },
    });
  });

  it('relays an elicitation request and delivers its answer', async () => {
    const upstream = await relayUpstream();
    const session = await openSession(sessions(), upstream.url);
    const result = await session.request(call(4, 'elicit'), {
      onMessage: (message) => {
        if ('id' in message && 'method' in message && message.method === 'elicitation/create') {
          void session.send({
            jsonrpc: '2.0',
            id: message.id,
            result: { action: 'accept', content: { name: 'Ada' } },
          });
        }
      },
    });
    expect(result).toMatchObject({ id: 4, result: { content: [{ text: '{"name":"Ada"}' }] } });
  });

  it('keeps the calls of one session apart when they run concurrently', async () => {
    const upstream = await relayUpstream();
    const session = await openSession(sessions(), upstream.url);
    const tokens: Record<string, unknown[]> = { a: [], b: [] };
    const [a, b] = await Promise.all(
      (['a', 'b'] as const).map((token, index) =>
        session.request(call(10 + index, 'ticks', { count: 3, everyMs: 5 }, token), {
          onMessage: (message) => {
            tokens[token]!.push(
              (message as { params?: { progressToken?: unknown } }).params?.progressToken,
            );
          },
        }),
      ),
    );
    expect(a).toMatchObject({ id: 10 });
    expect(b).toMatchObject({ id: 11 });
    expect(tokens).toEqual({ a: ['a', 'a', 'a'], b: ['b', 'b', 'b'] });
  });

  it('resumes a stream the upstream closed mid-call with GET and Last-Event-ID', async () => {
    const upstream = await relayUpstream({ eventStore: true, retryInterval: 5 });
    const session = await openSession(sessions(), upstream.url);
    const progress: unknown[] = [];
    const result = await session.request(call(5, 'drop', {}, 'tok-5'), {
      onMessage: (message) =>
        progress.push((message as { params?: { progress?: unknown } }).params?.progress),
    });
    expect(result).toEqual({
      jsonrpc: '2.0',
      id: 5,
      result: { content: [{ type: 'text', text: 'resumed' }] },
    });
    expect(progress).toEqual([1, 2]);
    const resume = upstream.log.find((entry) => entry.httpMethod === 'GET');
    expect(resume).toMatchObject({ sessionId: session.sessionId, protocolVersion: '2025-11-25' });
    expect(resume?.lastEventId).toMatch(/\|\d+$/);
  });

  it('fails a stream that ends before its response without event ids, after relaying what came', async () => {
    const url = await rawUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n',
      );
    });
    const { session } = await sessions().open(configFor(url), initialize());
    const seen: JsonRpcMessage[] = [];
    const error = await failure(
      session!.request(call(7, 'anything'), { onMessage: (message) => seen.push(message) }),
    );
    expect(error).toMatchObject({
      code: 'MCP_UPSTREAM_ERROR',
      detail: 'SSE stream ended before the response',
    });
    expect(seen).toHaveLength(1);
  });

  it('gives up on a stream that cannot be resumed after the bounded attempts', async () => {
    let gets = 0;
    const url = await rawUpstream((req, res) => {
      if (req.method === 'GET') gets++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The call's stream primes an event id and ends; resumptions replay nothing.
      res.end(req.method === 'POST' ? 'id: e1\ndata: \n\n' : ': nothing to replay\n\n');
    });
    const { session } = await sessions().open(configFor(url), initialize());
    const error = await failure(session!.request(call(6, 'anything')));
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
    expect(error.detail).toContain('3 resumptions');
    expect(gets).toBe(3);
  });
});

describe('the standalone GET stream', () => {
  it('delivers a server notification sent outside any request, and again after a reconnect', async () => {
    const upstream = await relayUpstream({ eventStore: true });
    const session = await openSession(sessions(), upstream.url);
    const received: JsonRpcMessage[] = [];
    let arrived: () => void = () => {};
    session.listen((message) => {
      received.push(message);
      arrived();
    });
    await upstream.waitForGetStreams(1);
    const first = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    await session.request(call(20, 'announce'));
    await first;
    expect(received).toEqual([{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }]);

    upstream.dropGetStreams();
    await upstream.waitForGetStreams(2);
    const second = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    await session.request(call(21, 'announce'));
    await second;
    expect(received).toHaveLength(2);
    const reconnect = upstream.log.filter((entry) => entry.httpMethod === 'GET')[1];
    expect(reconnect?.lastEventId).toMatch(/^_GET_stream\|\d+$/);
  });

  it('stays open through a silence longer than the read timeout', async () => {
    const upstream = await relayUpstream();
    const session = await openSession(sessions(), upstream.url, { readTimeoutMs: 200 });
    const received: JsonRpcMessage[] = [];
    let arrived: () => void = () => {};
    const announced = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    session.listen((message) => {
      received.push(message);
      arrived();
    });
    await upstream.waitForGetStreams(1);
    // A call that outlasts the read timeout (its progress keeps it alive); the GET stream is silent.
    await session.request(call(30, 'ticks', { count: 4, everyMs: 150 }, 'p'));
    await session.request(call(31, 'announce'));
    await announced;
    expect(received).toEqual([{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }]);
    expect(upstream.log.filter((entry) => entry.httpMethod === 'GET')).toHaveLength(1);
  });

  it('is quietly absent when the upstream answers 405', async () => {
    const methods: string[] = [];
    const url = await rawUpstream((req, res) => {
      methods.push(req.method ?? '');
      res.writeHead(405, { allow: 'POST' }).end();
    });
    const { session } = await sessions().open(configFor(url), initialize());
    const ended = await new Promise<UpstreamError | undefined>((resolve) => {
      session!.listen(() => {}, resolve);
    });
    expect(ended).toBeUndefined();
    expect(methods).toEqual(['GET']);
  });

  it('ends with the session when the upstream answers 404 to the GET', async () => {
    const url = await rawUpstream((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    });
    const { session } = await sessions().open(configFor(url), initialize());
    let gone = 0;
    session!.onGone = () => {
      gone++;
    };
    const ended = await new Promise<UpstreamError | undefined>((resolve) => {
      session!.listen(() => {}, resolve);
    });
    expect(ended).toMatchObject({ code: 'MCP_UPSTREAM_ERROR', httpStatus: 404 });
    expect(gone).toBe(1);
  });
});

describe('session end, limits and failures', () => {
  it('calls onGone once when the upstream forgot the session, and the call fails with 404', async () => {
    const upstream = await mcpUpstream('sse', true);
    const session = await openSession(sessions(), upstream.url);
    let gone = 0;
    session.onGone = () => {
      gone++;
    };
    await upstream.expireSessions();
    const error = await failure(session.request(call(2, 'echo')));
    expect(error).toMatchObject({ code: 'MCP_UPSTREAM_ERROR', httpStatus: 404 });
    await failure(
      session.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }),
    );
    expect(gone).toBe(1);
  });

  it('times out a call whose upstream stays silent beyond the read timeout', async () => {
    const upstream = await relayUpstream();
    const session = await openSession(sessions(), upstream.url, { readTimeoutMs: 200 });
    const error = await failure(session.request(call(2, 'block')));
    expect(error.code).toBe('MCP_UPSTREAM_TIMEOUT');
  });

  it('does not cut a call that keeps sending progress past the read timeout', async () => {
    const upstream = await relayUpstream();
    const session = await openSession(sessions(), upstream.url, { readTimeoutMs: 400 });
    let ticks = 0;
    const result = await session.request(call(2, 'ticks', { count: 6, everyMs: 150 }, 'p'), {
      onMessage: () => {
        ticks++;
      },
    });
    expect(ticks).toBe(6);
    expect(result).toMatchObject({ result: { content: [{ text: 'ticked' }] } });
  });

  it('times out waiting for a connection', async () => {
    const upstream = await mcpUpstream('sse', true);
    const owner = sessions({ maxConnectionsPerServer: 1 });
    const session = await openSession(owner, upstream.url, { connectTimeoutMs: 100 });
    const blocked = failure(session.request(call(2, 'block')));
    await upstream.waitForCalls('block', 1);
    const error = await failure(session.request(call(3, 'echo')));
    expect(error.code).toBe('MCP_UPSTREAM_TIMEOUT');
    expect(error.detail).toContain('connect');
    await session.close();
    expect((await blocked).code).toBe('MCP_UPSTREAM_ABORTED');
  });

  it('rejects with MCP_UPSTREAM_ABORTED when the caller aborts, and close() aborts the rest', async () => {
    const upstream = await mcpUpstream('sse', true);
    const session = await openSession(sessions(), upstream.url);
    const controller = new AbortController();
    const aborted = session.request(call(2, 'block'), { signal: controller.signal });
    const closed = failure(session.request(call(3, 'block')));
    await upstream.waitForCalls('block', 2);
    controller.abort();
    expect((await failure(aborted)).code).toBe('MCP_UPSTREAM_ABORTED');
    await session.close();
    expect((await closed).code).toBe('MCP_UPSTREAM_ABORTED');
  });

  it('bounds each message, not the stream: many small progress messages pass, one large result fails', async () => {
    const upstream = await relayUpstream();
    const session = await openSession(sessions(), upstream.url, { maxMessageBytes: 2_000 });
    let ticks = 0;
    await session.request(call(2, 'ticks', { count: 30, everyMs: 0 }, 'p'), {
      onMessage: () => {
        ticks++;
      },
    });
    expect(ticks).toBe(30);
    const error = await failure(session.request(call(3, 'big', { bytes: 5_000 })));
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
    expect(error.detail).toContain('exceeds 2000 bytes');
  });

  it('bounds a JSON answer too', async () => {
    const upstream = await mcpUpstream('json', true);
    const session = await openSession(sessions(), upstream.url, { maxMessageBytes: 1_000 });
    const error = await failure(session.request(call(2, 'echo', { text: 'y'.repeat(2_000) })));
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
  });

  it('closing the owner ends every open session with a DELETE and refuses new ones', async () => {
    const upstream = await mcpUpstream('sse', true);
    const owner = new UpstreamSessions();
    const first = await openSession(owner, upstream.url);
    const second = await openSession(owner, upstream.url);
    expect(owner.size).toBe(2);
    await owner.close();
    const deletes = upstream.log.filter((entry) => entry.httpMethod === 'DELETE');
    expect(deletes.map((entry) => entry.sessionId).sort()).toEqual(
      [first.sessionId, second.sessionId].sort(),
    );
    expect(upstream.liveSessions).toEqual([]);
    const error = await failure(owner.open(configFor(upstream.url), initialize()));
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
  });

  it('close() sends DELETE with the session id and ends the upstream session', async () => {
    const upstream = await mcpUpstream('sse', true);
    const owner = sessions();
    const session = await openSession(owner, upstream.url);
    expect(upstream.liveSessions).toEqual([session.sessionId]);
    await session.close();
    expect(upstream.log.at(-1)).toMatchObject({
      httpMethod: 'DELETE',
      sessionId: session.sessionId,
    });
    expect(upstream.liveSessions).toEqual([]);
    expect(owner.size).toBe(0);
    expect((await failure(session.request(call(2, 'echo')))).code).toBe('MCP_UPSTREAM_ERROR');
  });
});
