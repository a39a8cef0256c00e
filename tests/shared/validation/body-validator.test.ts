// The routes' body validator compiler (shared/validation/body-validator.ts), alone and in a real
// Fastify route: zod without coercion, REQUEST_INVALID listing every problem in the shared
// wording (or the route's own refusal), bounds before and normalization after the schema, other
// request parts untouched.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GatewayError } from '../../../shared/errors/index.js';
import { checkBodyWith, compileBodyValidator } from '../../../shared/validation/body-validator.js';

class Refused extends Error {
  constructor(readonly kind: string) {
    super(kind);
  }
}

const schema = z.strictObject({ name: z.string().min(1), count: z.int().optional() });
const refuse = (error: z.ZodError) => new Refused(`invalid ${error.issues[0]!.path.join('.')}`);

describe('checkBodyWith', () => {
  it('refuses with REQUEST_INVALID listing every problem in plain words by default', () => {
    const refusal = checkBodyWith(schema)({ name: '', count: '2', extra: true });
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({
      code: 'REQUEST_INVALID',
      message:
        'name must not be empty; count must be an integer, not a string; extra is not a field of this request (its fields: name, count)',
      details: {
        issues: [
          { field: 'name', message: 'must not be empty' },
          { field: 'count', message: 'must be an integer, not a string' },
          { field: 'extra', message: 'is not a field of this request (its fields: name, count)' },
        ],
      },
    });
  });

  it('answers the parsed body, without coercion', () => {
    const check = checkBodyWith(schema, { refuse });
    expect(check({ name: 'a', count: 2 })).toEqual({ name: 'a', count: 2 });
    expect(check({ name: 'a', count: '2' })).toEqual(new Refused('invalid count'));
    expect(check({ name: 'a', extra: true })).toBeInstanceOf(Refused);
    expect(check(null)).toBeInstanceOf(Refused);
  });

  it('runs before, the schema, then after, stopping at a refusal', () => {
    const seen: string[] = [];
    const check = checkBodyWith(schema, {
      refuse,
      before: (data) => {
        seen.push('before');
        return Array.isArray(data) ? new Refused('too large') : undefined;
      },
      after: (body) => {
        seen.push('after');
        return body.name === 'no' ? new Refused('after') : { upper: body.name.toUpperCase() };
      },
    });
    expect(check([])).toEqual(new Refused('too large'));
    expect(seen).toEqual(['before']);
    expect(check({ name: 'x' })).toEqual({ upper: 'X' });
    expect(check({ name: 'no' })).toEqual(new Refused('after'));
    const refusal = checkBodyWith(schema, {
      refuse: (error) => new Refused(error.issues[0]!.message),
    })({ name: 5 });
    expect(refusal).toEqual(new Refused('must be a string, not 5'));
  });
});

describe('compileBodyValidator in a Fastify route', () => {
  const app = Fastify();
  beforeAll(async () => {
    app.setErrorHandler((error, _request, reply) =>
      reply.code(400).send({ refused: error instanceof Refused ? error.kind : 'other' }),
    );
    app.post(
      '/things/:id',
      {
        schema: {
          params: { type: 'object', properties: { id: { type: 'integer' } } },
          body: { type: 'object' },
        },
        validatorCompiler: compileBodyValidator(schema, {
          refuse,
          after: (body) => ({ ...body, normalized: true }),
        }),
      },
      (request) => ({ params: request.params, body: request.body }),
    );
    await app.ready();
  });
  afterAll(() => app.close());

  it('replaces the body by the checked value and leaves the params as they came', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: '/things/7',
      payload: { name: 'a' },
    });
    expect(answer.json()).toEqual({
      params: { id: '7' },
      body: { name: 'a', normalized: true },
    });
  });

  it('hands the route its own refusal', async () => {
    const answer = await app.inject({ method: 'POST', url: '/things/7', payload: { name: '' } });
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toEqual({ refused: 'invalid name' });
  });
});
