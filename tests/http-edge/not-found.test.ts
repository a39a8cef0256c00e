// An unknown route is 404 NOT_FOUND whatever its body: Fastify parses the body before the
// not-found handler runs, so a body that does not parse, is too large or has an unknown media
// type must not turn the answer into a 400, 413 or 415. A known route still refuses such bodies.
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../http-edge/health.js';
import { buildServer } from '../../http-edge/server.js';
import { ERROR_CODES } from '../../shared/errors/index.js';

describe('unknown routes', () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    app = await buildServer({
      logger: pino({ level: 'silent' }),
      readiness: createReadiness(),
      bodyLimit: 64,
    });
    app.post('/echo', async (request) => request.body);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app?.close());

  const post = async (path: string, contentType: string, body: string) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it.each([
    ['a body that is not JSON', 'application/json', '{"not json'],
    ['an empty JSON body', 'application/json', ''],
    ['a body over the limit', 'application/json', JSON.stringify({ big: 'x'.repeat(200) })],
    ['an unknown media type', 'application/x-unknown', 'hello'],
    ['a JSON body', 'application/json', '{"a":1}'],
  ])('answer 404 NOT_FOUND for %s', async (_name, contentType, body) => {
    expect(await post('/no/such/route?x=1', contentType, body)).toEqual({
      status: 404,
      body: {
        error: 'NOT_FOUND',
        reasonCode: 'NOT_FOUND',
        message: 'no route POST /no/such/route',
        hint: ERROR_CODES.NOT_FOUND.hint,
        docs: 'README.md#http-api-data-plane',
      },
    });
  });

  it('a known route still answers a body that is not JSON with 400 REQUEST_INVALID', async () => {
    const answer = await post('/echo', 'application/json', '{"not json');
    expect([answer.status, answer.body.reasonCode]).toEqual([400, 'REQUEST_INVALID']);
    expect(answer.body.issues).toEqual([{ field: '(body)', message: 'is not valid JSON' }]);
  });
});
