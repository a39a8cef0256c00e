import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createReadiness } from '../../http-edge/health.js';
import { buildServer } from '../../http-edge/server.js';

describe('health endpoints', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
  });

  it('answers /healthz at once and /readyz 503 with the reason until ready', async () => {
    const readiness = createReadiness();
    app = await buildServer({ logger: pino({ level: 'silent' }), readiness });
    readiness.reason = 'applying migrations';
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const notReady = await app.inject('/readyz');
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json()).toEqual({ status: 'not_ready', reason: 'applying migrations' });
    readiness.ready = true;
    const ready = await app.inject('/readyz');
    expect([ready.statusCode, ready.json()]).toEqual([200, { status: 'ready' }]);
  });

  it('refuses bodies larger than the limit with 413', async () => {
    app = await buildServer({
      logger: pino({ level: 'silent' }),
      readiness: createReadiness(),
      bodyLimit: 16,
    });
    app.post('/echo', async (request) => request.body);
    const response = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ big: 'x'.repeat(64) }),
    });
    expect(response.statusCode).toBe(413);
  });
});
