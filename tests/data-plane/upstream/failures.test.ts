// Failure modes of the forwarding client against a raw node:http upstream whose every byte the
// test controls: each condition maps to its UpstreamError code (or to a passed-through JSON-RPC
// response), within the configured time limits, without leaking connections.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createUpstreamClient,
  type UpstreamClient,
  type UpstreamClientOptions,
  UpstreamError,
} from '../../../data-plane/upstream/index.js';

interface RawUpstream {
  readonly url: string;
  readonly server: Server;
  readonly sockets: Set<Socket>;
  /** Connections accepted so far. */
  connections: number;
  /** JSON-RPC methods received, in order. */
  readonly methods: string[];
  /** The socket of each request handed to onCall, in order. */
  readonly callSockets: Socket[];
  close(): Promise<void>;
}

type CallHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  message: { id: string | number; method: string; params?: unknown },
) => void;

/** An MCP-ish upstream: answers initialize and notifications itself, other requests via onCall. */
async function startRawUpstream(
  onCall: CallHandler,
  init: { sessionId?: string; onInitialize?: CallHandler } = {},
): Promise<RawUpstream> {
  const sockets = new Set<Socket>();
  const methods: string[] = [];
  const callSockets: Socket[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      methods.push(message.method);
      if (message.method === 'initialize') {
        if (init.onInitialize) return init.onInitialize(req, res, message);
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (init.sessionId) headers['mcp-session-id'] = init.sessionId;
        res.writeHead(200, headers);
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: message.id,
            result: {
              protocolVersion: '2025-06-18',
              capabilities: { tools: {} },
              serverInfo: { name: 'raw', version: '1' },
            },
          }),
        );
        return;
      }
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      callSockets.push(req.socket);
      onCall(req, res, message);
    });
  });
  const upstream: RawUpstream = {
    url: '',
    server,
    sockets,
    connections: 0,
    methods,
    callSockets,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', (socket: Socket) => {
    upstream.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(upstream, { url: `http://127.0.0.1:${port}/mcp` });
}

function jsonResponse(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const echoCall = (id: string | number = 1) => ({
  jsonrpc: '2.0' as const,
  id,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: 'hi' } },
});

let upstream: RawUpstream | undefined;
let client: UpstreamClient | undefined;

afterEach(async () => {
  await client?.close();
  await upstream?.close();
  client = undefined;
  upstream = undefined;
});

async function forwardTo(
  onCall: CallHandler,
  options: UpstreamClientOptions = {},
  extra: { signal?: AbortSignal; sessionId?: string } = {},
) {
  upstream = await startRawUpstream(onCall, { sessionId: extra.sessionId });
  client = createUpstreamClient({ connectTimeoutMs: 1_000, readTimeoutMs: 5_000, ...options });
  return client.forward({
    target: { serverKey: 'raw', url: upstream.url },
    sessionKey: 'key',
    message: echoCall(),
    signal: extra.signal,
  });
}

async function expectUpstreamError(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

/** Polls `condition`; `timeoutMs` only fails a wait that would otherwise never end. */
async function waitUntil(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('transport failures', () => {
  it('connection refused → MCP_UPSTREAM_ERROR', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    client = createUpstreamClient();
    const error = await expectUpstreamError(
      client.forward({
        target: { serverKey: 'gone', url: `http://127.0.0.1:${port}/mcp` },
        sessionKey: 'key',
        message: echoCall(),
      }),
    );
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
    expect(error.detail).toBe('connection refused');
  });

  it('an unresolvable host → MCP_UPSTREAM_ERROR', async () => {
    client = createUpstreamClient({ connectTimeoutMs: 10_000 });
    const error = await expectUpstreamError(
      client.forward({
        target: { serverKey: 'dns', url: 'http://no-such-host.invalid/mcp' },
        sessionKey: 'key',
        message: echoCall(),
      }),
    );
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
  });

  it('an upstream URL that is not http(s) → MCP_UPSTREAM_ERROR', async () => {
    client = createUpstreamClient();
    const error = await expectUpstreamError(
      client.forward({
        target: { serverKey: 'ftp', url: 'ftp://127.0.0.1/mcp' },
        sessionKey: 'key',
        message: echoCall(),
      }),
    );
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
  });

  it('accepted but never answered → MCP_UPSTREAM_TIMEOUT after the read timeout', async () => {
    const started = performance.now();
    const error = await expectUpstreamError(forwardTo(() => {}, { readTimeoutMs: 300 }));
    const elapsed = performance.now() - started;
    expect(error.code).toBe('MCP_UPSTREAM_TIMEOUT');
    expect(error.detail).toBe('no response headers within the read timeout');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    // Only "it ended": without the timeout the call would hang until the test's own timeout.
    expect(elapsed).toBeLessThan(20_000);
  });

  it('a body that never ends → MCP_UPSTREAM_TIMEOUT (the read timeout covers the whole body)', async () => {
    const started = performance.now();
    const error = await expectUpstreamError(
      forwardTo(
        (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"jsonrpc":"2.0",');
          // keep trickling bytes so that an idle-based body timeout would never fire
          const timer = setInterval(() => res.write(' '), 50);
          res.on('close', () => clearInterval(timer));
        },
        { readTimeoutMs: 400 },
      ),
    );
    expect(error.code).toBe('MCP_UPSTREAM_TIMEOUT');
    expect(error.httpStatus).toBe(200);
    // Only "it ended": the trickle never stops, so only the read timeout can end the call.
    expect(performance.now() - started).toBeLessThan(20_000);
    await waitUntil(() => upstream!.callSockets[0]!.destroyed);
  });

  it('no free connection within the connect timeout → MCP_UPSTREAM_TIMEOUT', async () => {
    upstream = await startRawUpstream(() => {}); // calls hang: the only connection stays busy
    client = createUpstreamClient({
      maxConnectionsPerOrigin: 1,
      connectTimeoutMs: 300,
      readTimeoutMs: 5_000,
    });
    const target = { serverKey: 'one', url: upstream.url };
    const hanging = client.forward({ target, sessionKey: 'a', message: echoCall(1) });
    hanging.catch(() => {});
    await waitUntil(() => upstream!.methods.includes('tools/call'));
    const error = await expectUpstreamError(
      client.forward({ target, sessionKey: 'a', message: echoCall(2) }),
    );
    expect(error.code).toBe('MCP_UPSTREAM_TIMEOUT');
    expect(error.detail).toBe('no connection within the connect timeout');
    upstream.server.closeAllConnections();
    expect((await expectUpstreamError(hanging)).code).toBe('MCP_UPSTREAM_ERROR');
  });

  it('a connection reset mid-answer → MCP_UPSTREAM_ERROR', async () => {
    const error = await expectUpstreamError(
      forwardTo((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"jsonrpc"');
        setTimeout(() => req.socket.destroy(), 20);
      }),
    );
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
  });
});

describe('answers that are not a JSON-RPC response', () => {
  it('500 with an HTML body → MCP_UPSTREAM_ERROR with the status, without the body', async () => {
    const error = await expectUpstreamError(
      forwardTo((_req, res) => {
        res.writeHead(500, { 'content-type': 'text/html' });
        res.end('<html><body>secret stack trace</body></html>');
      }),
    );
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
    expect(error.httpStatus).toBe(500);
    expect(error.detail).toBe('HTTP 500 with a text/html body');
    expect(error.message).not.toContain('secret');
  });

  it('502 with a non-JSON body declared as JSON → MCP_UPSTREAM_ERROR', async () => {
    const error = await expectUpstreamError(
      forwardTo((_req, res) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end('Bad Gateway');
      }),
    );
    expect(error).toMatchObject({ code: 'MCP_UPSTREAM_ERROR', httpStatus: 502 });
  });

  it('a JSON body that is not JSON-RPC → MCP_UPSTREAM_ERROR', async () => {
    const error = await expectUpstreamError(
      forwardTo((_req, res) => jsonResponse(res, 200, { hello: 'world' })),
    );
    expect(error.detail).toBe('response body is not a JSON-RPC response');
  });

  it('a response with another id → MCP_UPSTREAM_ERROR', async () => {
    const error = await expectUpstreamError(
      forwardTo((_req, res) => jsonResponse(res, 200, { jsonrpc: '2.0', id: 999, result: {} })),
    );
    expect(error.code).toBe('MCP_UPSTREAM_ERROR');
    expect(error.detail).toBe('response id does not match the request');
  });

  it('202 Accepted to a request → MCP_UPSTREAM_ERROR', async () => {
    const error = await expectUpstreamError(forwardTo((_req, res) => res.writeHead(202).end()));
    expect(error).toMatchObject({ code: 'MCP_UPSTREAM_ERROR', httpStatus: 202 });
  });

  it('a body over maxResponseBytes (declared length) → MCP_UPSTREAM_ERROR', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text: 'x'.repeat(4_000) } });
    const error = await expectUpstreamError(
      forwardTo(
        (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(body);
        },
        { maxResponseBytes: 1_024 },
      ),
    );
    expect(error.detail).toBe('response body exceeds 1024 bytes');
  });

  it('a body over maxResponseBytes (chunked) → MCP_UPSTREAM_ERROR and the socket is dropped', async () => {
    const error = await expectUpstreamError(
      forwardTo(
        (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"jsonrpc":"2.0","id":1,"result":{"text":"');
          const timer = setInterval(() => res.write('x'.repeat(512)), 5);
          res.on('close', () => clearInterval(timer));
        },
        { maxResponseBytes: 2_048 },
      ),
    );
    expect(error.detail).toBe('response body exceeds 2048 bytes');
    await waitUntil(() => upstream!.callSockets[0]!.destroyed);
  });
});

describe('JSON-RPC errors from the upstream pass through', () => {
  it('with HTTP 200', async () => {
    const body = { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params' } };
    const result = await forwardTo((_req, res) => jsonResponse(res, 200, body));
    expect(result.response).toEqual(body);
    expect(result.httpStatus).toBe(200);
  });

  it('with HTTP 4xx and 5xx and an id of null', async () => {
    const body = { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request' } };
    const result = await forwardTo((_req, res) => jsonResponse(res, 400, body));
    expect(result).toMatchObject({ response: body, httpStatus: 400 });
    await client!.close();
    await upstream!.close();
    const five = await forwardTo((_req, res) =>
      jsonResponse(res, 503, { ...body, id: 1, error: { code: -32603, message: 'down' } }),
    );
    expect(five).toMatchObject({ httpStatus: 503, response: { id: 1, error: { code: -32603 } } });
  });
});

describe('SSE answers', () => {
  const sse = (res: ServerResponse, text: string, end = true) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (end) res.end(text);
    else res.write(text);
  };

  it('skips notifications, requests and comments before the response; CRLF and multi-line data', async () => {
    const result = await forwardTo((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': keep-alive comment\r\n\r\n');
      res.write(
        'event: message\r\nid: 1\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress",' +
          '"params":{"progress":1}}\r\n\r\n',
      );
      res.write(
        'id: 2\r\ndata: {"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage"}\r\n\r',
      );
      res.write('\nevent: other\r\ndata: {"ignored": true}\r\n\r\n');
      res.write('id: 3\r\ndata: {"jsonrpc":"2.0",\r\ndata: "id":1,\r\n');
      setTimeout(() => res.end('data: "result":{"ok":true}}\r\n\r\n'), 20);
    });
    expect(result.response).toEqual({ jsonrpc: '2.0', id: 1, result: { ok: true } });
  });

  it('data that is not JSON → MCP_UPSTREAM_ERROR', async () => {
    const error = await expectUpstreamError(
      forwardTo((_req, res) => sse(res, 'data: {not json\n\n')),
    );
    expect(error.detail).toBe('SSE event data is not JSON');
  });

  it('a stream that ends before the response → MCP_UPSTREAM_ERROR', async () => {
    const error = await expectUpstreamError(
      forwardTo((_req, res) =>
        sse(res, 'data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n'),
      ),
    );
    expect(error.detail).toBe('SSE stream ended before the response');
  });

  it('a response event without its terminating blank line → MCP_UPSTREAM_ERROR', async () => {
    const error = await expectUpstreamError(
      forwardTo((_req, res) => sse(res, 'data: {"jsonrpc":"2.0","id":1,"result":{}}\n')),
    );
    expect(error.detail).toBe('SSE stream ended before the response');
  });

  it('a response with another id in the stream → MCP_UPSTREAM_ERROR', async () => {
    const error = await expectUpstreamError(
      forwardTo((_req, res) => sse(res, 'data: {"jsonrpc":"2.0","id":2,"result":{}}\n\n')),
    );
    expect(error.detail).toBe('response id does not match the request');
  });

  it('resolves at the response event and cuts a stream that goes on', async () => {
    const started = performance.now();
    const result = await forwardTo(
      (_req, res) => {
        sse(res, 'data: {"jsonrpc":"2.0","id":1,"result":{"early":true}}\n\n', false);
        const timer = setInterval(() => res.write(': still here\n\n'), 20);
        res.on('close', () => clearInterval(timer));
      },
      { readTimeoutMs: 120_000 },
    );
    expect(result.response).toEqual({ jsonrpc: '2.0', id: 1, result: { early: true } });
    // Not ended by the read timeout: that would take far longer.
    expect(performance.now() - started).toBeLessThan(60_000);
    await waitUntil(() => upstream!.callSockets[0]!.destroyed);
  });

  it('keeps the connection when the stream closes right after the response', async () => {
    upstream = await startRawUpstream((_req, res, message) =>
      sse(res, `data: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} })}\n\n`),
    );
    client = createUpstreamClient();
    const target = { serverKey: 'sse', url: upstream.url };
    await client.forward({ target, sessionKey: 'k', message: echoCall(0) });
    const opened = upstream.connections;
    for (let i = 1; i <= 5; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      const { response } = await client.forward({ target, sessionKey: 'k', message: echoCall(i) });
      expect(response.id).toBe(i);
    }
    expect(upstream.connections).toBe(opened);
    expect(new Set(upstream.callSockets.slice(1)).size).toBe(1);
  });
});

describe('abort', () => {
  it('rejects with MCP_UPSTREAM_ABORTED quickly and closes the connection', async () => {
    const controller = new AbortController();
    let callArrived = false;
    const pending = forwardTo(
      () => {
        callArrived = true;
      },
      { readTimeoutMs: 120_000 },
      { signal: controller.signal },
    );
    await waitUntil(() => callArrived);
    const socket = upstream!.callSockets[0]!;
    expect(socket.destroyed).toBe(false);
    const started = performance.now();
    controller.abort();
    const error = await expectUpstreamError(pending);
    expect(error.code).toBe('MCP_UPSTREAM_ABORTED');
    // Ended by the abort, not by the read timeout, which would take far longer.
    expect(performance.now() - started).toBeLessThan(60_000);
    await waitUntil(() => socket.destroyed);
  });

  it('an already aborted signal never contacts the upstream', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await expectUpstreamError(forwardTo(() => {}, {}, { signal: controller.signal }));
    expect(error.code).toBe('MCP_UPSTREAM_ABORTED');
    expect(upstream!.methods).toEqual([]);
  });

  it('aborts while the session is being opened, without breaking it for others', async () => {
    let releaseInit: (() => void) | undefined;
    upstream = await startRawUpstream(
      (_req, res, message) =>
        jsonResponse(res, 200, { jsonrpc: '2.0', id: message.id, result: {} }),
      {
        onInitialize: (_req, res, message) => {
          releaseInit = () =>
            jsonResponse(res, 200, {
              jsonrpc: '2.0',
              id: message.id,
              result: {
                protocolVersion: '2025-06-18',
                capabilities: {},
                serverInfo: { name: 'r', version: '1' },
              },
            });
        },
      },
    );
    client = createUpstreamClient();
    const target = { serverKey: 'slow-init', url: upstream.url };
    const controller = new AbortController();
    const aborted = client.forward({
      target,
      sessionKey: 'k',
      message: echoCall(1),
      signal: controller.signal,
    });
    const other = client.forward({ target, sessionKey: 'k', message: echoCall(2) });
    await waitUntil(() => releaseInit !== undefined);
    controller.abort();
    expect((await expectUpstreamError(aborted)).code).toBe('MCP_UPSTREAM_ABORTED');
    releaseInit!();
    expect((await other).response.id).toBe(2);
    expect(upstream.methods.filter((m) => m === 'initialize')).toHaveLength(1);
  });
});

describe('sessions against a raw upstream', () => {
  it('retries exactly once when the session stays unknown, then passes the 404 answer through', async () => {
    const body = {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: 'Session not found' },
    };
    const result = await forwardTo(
      (_req, res) => jsonResponse(res, 404, body),
      {},
      { sessionId: 's-1' },
    );
    expect(result).toMatchObject({ httpStatus: 404, response: body });
    expect(upstream!.methods).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/call',
      'initialize',
      'notifications/initialized',
      'tools/call',
    ]);
  });

  it('a failed initialize → MCP_UPSTREAM_ERROR, and the next call tries again', async () => {
    let fail = true;
    upstream = await startRawUpstream(
      (_req, res, message) =>
        jsonResponse(res, 200, { jsonrpc: '2.0', id: message.id, result: {} }),
      {
        onInitialize: (_req, res, message) => {
          if (fail) {
            jsonResponse(res, 200, {
              jsonrpc: '2.0',
              id: message.id,
              error: { code: -32602, message: 'no' },
            });
            return;
          }
          jsonResponse(res, 200, {
            jsonrpc: '2.0',
            id: message.id,
            result: {
              protocolVersion: '2025-03-26',
              capabilities: {},
              serverInfo: { name: 'r', version: '1' },
            },
          });
        },
      },
    );
    client = createUpstreamClient();
    const target = { serverKey: 'init', url: upstream.url };
    const error = await expectUpstreamError(
      client.forward({ target, sessionKey: 'k', message: echoCall() }),
    );
    expect(error).toMatchObject({
      code: 'MCP_UPSTREAM_ERROR',
      detail: 'initialize failed with JSON-RPC error -32602',
    });
    fail = false;
    const { response } = await client.forward({ target, sessionKey: 'k', message: echoCall(7) });
    expect(response.id).toBe(7);
  });

  it('reuses keep-alive connections for sequential JSON forwards', async () => {
    upstream = await startRawUpstream((_req, res, message) =>
      jsonResponse(res, 200, { jsonrpc: '2.0', id: message.id, result: {} }),
    );
    client = createUpstreamClient();
    const target = { serverKey: 'ka', url: upstream.url };
    await client.forward({ target, sessionKey: 'k', message: echoCall(0) });
    const opened = upstream.connections;
    for (let i = 1; i <= 10; i++) {
      // undici hands a socket back to its pool one event-loop turn after a response
      await new Promise((resolve) => setImmediate(resolve));
      await client.forward({ target, sessionKey: 'k', message: echoCall(i) });
    }
    expect(upstream.connections).toBe(opened);
    expect(new Set(upstream.callSockets.slice(1)).size).toBe(1);
  });
});

describe('listTools pagination', () => {
  const page = (id: unknown, tools: unknown[], nextCursor?: string) => ({
    jsonrpc: '2.0',
    id,
    result: nextCursor === undefined ? { tools } : { tools, nextCursor },
  });

  it('follows nextCursor until the last page', async () => {
    const cursors: unknown[] = [];
    upstream = await startRawUpstream((_req, res, message) => {
      const cursor = (message.params as { cursor?: string }).cursor;
      cursors.push(cursor);
      if (cursor === undefined) {
        jsonResponse(
          res,
          200,
          page(message.id, [{ name: 'a', annotations: { destructiveHint: true } }], 'p2'),
        );
      } else if (cursor === 'p2') {
        jsonResponse(res, 200, page(message.id, [{ name: 'b' }], 'p3'));
      } else {
        jsonResponse(
          res,
          200,
          page(message.id, [{ name: 'c', annotations: { readOnlyHint: true } }]),
        );
      }
    });
    client = createUpstreamClient();
    const tools = await client.listTools({ serverKey: 'pages', url: upstream.url });
    expect(tools).toEqual([
      { name: 'a', annotations: { destructiveHint: true } },
      { name: 'b' },
      { name: 'c', annotations: { readOnlyHint: true } },
    ]);
    expect(cursors).toEqual([undefined, 'p2', 'p3']);
  });

  it('a cursor that repeats → MCP_UPSTREAM_ERROR instead of looping', async () => {
    upstream = await startRawUpstream((_req, res, message) =>
      jsonResponse(res, 200, page(message.id, [{ name: 'a' }], 'same')),
    );
    client = createUpstreamClient();
    const error = await expectUpstreamError(
      client.listTools({ serverKey: 'loop', url: upstream.url }),
    );
    expect(error.detail).toBe('tools/list pagination repeats a cursor');
  });

  it('a JSON-RPC error → MCP_UPSTREAM_ERROR', async () => {
    upstream = await startRawUpstream((_req, res, message) =>
      jsonResponse(res, 200, {
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32601, message: 'nope' },
      }),
    );
    client = createUpstreamClient();
    const error = await expectUpstreamError(
      client.listTools({ serverKey: 'err', url: upstream.url }),
    );
    expect(error.detail).toBe('tools/list failed with JSON-RPC error -32601');
  });
});

describe('close', () => {
  it('rejects later forwards with MCP_UPSTREAM_ERROR', async () => {
    client = createUpstreamClient();
    await client.close();
    const error = await expectUpstreamError(
      client.forward({
        target: { serverKey: 'x', url: 'http://127.0.0.1:9/mcp' },
        sessionKey: 'k',
        message: echoCall(),
      }),
    );
    expect(error.detail).toBe('the upstream client is closed');
  });
});
