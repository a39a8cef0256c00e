// A slow client cannot hold the gateway's sockets: one that trickles its headers or its body is
// answered 408 and disconnected once the header or request deadline passes, and a kept-alive
// socket is closed when idle, at once when the server is closing. Real sockets against a server
// built with short timeouts; each test waits for the server to close the sockets.
import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createReadiness } from '../../http-edge/health.js';
import { buildServer, DEFAULT_SERVER_TIMEOUTS } from '../../http-edge/server.js';
import { until } from '../support/until.js';

const SHORT = { headersMs: 300, requestMs: 500, idleMs: 5_000, keepAliveMs: 300 };

interface Closed {
  readonly received: string;
  readonly afterMs: number;
  /** The server ended the connection (FIN) rather than the client. */
  readonly endedByServer: boolean;
}

/** Opens a socket, writes `head`, then one byte every `everyMs` until the server closes it. */
function trickle(port: number, head: string, everyMs: number): Promise<Closed> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket: Socket = connect(port, '127.0.0.1');
    let received = '';
    let endedByServer = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('end', () => {
      endedByServer = true;
    });
    socket.on('error', () => {});
    socket.write(head);
    const drip = setInterval(() => {
      if (socket.writable) socket.write('a');
    }, everyMs);
    socket.on('close', () => {
      clearInterval(drip);
      resolve({ received, afterMs: Date.now() - started, endedByServer });
    });
  });
}

describe('server timeouts', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function listen(timeouts = SHORT): Promise<number> {
    app = await buildServer({
      logger: pino({ level: 'silent' }),
      readiness: createReadiness(),
      timeouts,
    });
    app.post('/echo', async (request) => ({ got: request.body }));
    // Refused before its body is read, as a request without a valid API key is.
    app.post(
      '/refused',
      { onRequest: async (_request, reply) => reply.code(401).send({ error: 'refused' }) },
      async () => ({}),
    );
    await app.listen({ host: '127.0.0.1', port: 0 });
    return (app.server.address() as { port: number }).port;
  }

  it('uses production defaults when none are given', async () => {
    app = await buildServer({ logger: pino({ level: 'silent' }), readiness: createReadiness() });
    expect({
      headersMs: app.server.headersTimeout,
      requestMs: app.server.requestTimeout,
      idleMs: app.server.timeout,
      keepAliveMs: app.server.keepAliveTimeout,
    }).toEqual(DEFAULT_SERVER_TIMEOUTS);
  });

  it('answers 408 and closes every socket trickling a body past the request timeout', async () => {
    const port = await listen();
    const head =
      'POST /echo HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n' +
      'Content-Length: 100000\r\n\r\n';
    const closed = await Promise.all(Array.from({ length: 50 }, () => trickle(port, head, 100)));
    for (const socket of closed) {
      expect(socket.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(socket.endedByServer).toBe(true);
      expect(socket.afterMs).toBeGreaterThanOrEqual(SHORT.requestMs - 50);
    }
  });

  it('closes a socket still trickling the body of a request it already refused', async () => {
    const port = await listen();
    const head =
      'POST /refused HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n' +
      'Content-Length: 100000\r\n\r\n';
    const closed = await Promise.all(Array.from({ length: 20 }, () => trickle(port, head, 100)));
    for (const socket of closed) {
      expect(socket.received).toMatch(/^HTTP\/1\.1 401 /);
      expect(socket.endedByServer).toBe(true);
    }
  });

  it('answers 408 and closes a socket trickling its headers past the header timeout', async () => {
    const port = await listen();
    const closed = await Promise.all(
      Array.from({ length: 20 }, () => trickle(port, 'POST /echo HTTP/1.1\r\nX-Slow: ', 50)),
    );
    for (const socket of closed) {
      expect(socket.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(socket.endedByServer).toBe(true);
    }
  });

  it('closes a kept-alive socket idle past the keep-alive timeout', async () => {
    const port = await listen();
    const closed = await new Promise<Closed>((resolve) => {
      const started = Date.now();
      const socket = connect(port, '127.0.0.1');
      let received = '';
      let endedByServer = false;
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        received += chunk;
      });
      socket.on('end', () => {
        endedByServer = true;
      });
      socket.on('close', () => resolve({ received, afterMs: Date.now() - started, endedByServer }));
      socket.write(
        'POST /echo HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n' +
          'Content-Length: 2\r\nConnection: keep-alive\r\n\r\n{}',
      );
    });
    expect(closed.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(closed.endedByServer).toBe(true);
  });

  // A shutdown must not wait out the keep-alive timeout (72 s) of a connection that was busy when
  // it began: that connection is closed as soon as its answer is out (http-edge/drain.ts).
  it('closing: a request in flight is answered, then its kept-alive connection is closed', async () => {
    app = await buildServer({ logger: pino({ level: 'silent' }), readiness: createReadiness() });
    let entered: () => void = () => {};
    const inFlight = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    app.get('/held', async () => {
      entered();
      await released;
      return { answered: true };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let endedByServer = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('end', () => {
      endedByServer = true;
    });
    const socketClosed = new Promise((resolve) => socket.on('close', resolve));
    socket.write('GET /held HTTP/1.1\r\nHost: gateway\r\nConnection: keep-alive\r\n\r\n');
    await inFlight;
    const closing = app.close();
    // Answered only once the server has stopped listening: Node has reaped the connections
    // that were idle then, and this one was busy.
    const server = app.server;
    await until(
      async () => server.listening,
      (listening) => !listening,
      'the server stops listening',
    );
    release();
    await closing;
    await socketClosed;
    app = undefined;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toContain('{"answered":true}');
    expect(endedByServer).toBe(true);
  });
});
