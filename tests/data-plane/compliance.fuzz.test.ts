import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPLIANCE_BATCH_PATH } from '../../data-plane/routes/compliance/index.js';
import { createReadiness } from '../../http-edge/health.js';
import { isErrorCode } from '../../shared/errors/index.js';
import { propertyRuns } from '../support/property-runs.js';
import { buildPublicApp } from '../support/public-app.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are read loosely; the assertions check their shape.
type Json = Record<string, any>;

/** Every answer is a JSON object: the batch result on 200, the registry error shape on 4xx. */
function expectContract(status: number, body: Json): void {
  expect(status).toBeLessThan(500);
  expect(body).toBeTypeOf('object');
  if (status === 200) {
    expect(typeof body.valid).toBe('boolean');
    expect(Array.isArray(body.items)).toBe(true);
    body.items.forEach((item: Json, index: number) => {
      expect(item.index).toBe(index);
      expect(item.valid).toBe(item.errors.length === 0);
      for (const error of item.errors) {
        expect(error).toMatchObject({ code: expect.any(String), path: expect.any(String) });
      }
    });
    expect(body.valid).toBe(body.items.every((item: Json) => item.valid));
    return;
  }
  expect(status).toBeGreaterThanOrEqual(400);
  expect(isErrorCode(body.reasonCode)).toBe(true);
  expect(body.error).toBe(body.reasonCode);
}

/** Strings and numbers an attacker sends: NUL, unpaired surrogates, escape look-alikes, extremes. */
const hostile = fc.oneof(
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udc00y',
    '\\u{0}',
    '\u{d800}',
    '9'.repeat(400),
  ),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, -0),
);
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), hostile);

const rule = fc.record(
  {
    ruleId: fc.oneof(fc.constantFrom('r1', 'r2', 'r1'), text),
    action: fc.oneof(fc.constantFrom('ALLOW', 'BLOCK', 'REQUIRE_HUMAN', 'SIMULATE'), text),
    condition: fc.oneof(
      fc.constantFrom(
        "tool.name == 'x'",
        'args.n > 3',
        "args.s.matches('(a|b)*c')",
        "tools.name == 'x' &&",
        "agentRole in ['a', 'b']",
      ),
      text,
    ),
    alertSeverity: fc.oneof(fc.constantFrom('LOW', 'MEDIUM', 'CRITICAL'), text),
  },
  { requiredKeys: [] },
);

const policyObject = fc.record(
  {
    version: fc.oneof(fc.constantFrom('1.0.0', '2.3.4', 'v1'), fc.jsonValue()),
    policyName: fc.oneof(fc.constantFrom('p', 'my-policy', 'Bad Name'), fc.jsonValue()),
    targetAgents: fc.oneof(fc.constant(['*']), fc.array(text), fc.jsonValue()),
    rules: fc.oneof(fc.array(rule, { maxLength: 4 }), fc.jsonValue()),
  },
  { requiredKeys: [] },
);

const toolName = fc.oneof(fc.constantFrom('x', 'wire_transfer'), fc.jsonValue());
const toolArguments = fc.oneof(fc.dictionary(text, fc.jsonValue()), fc.jsonValue());
const agentRole = fc.oneof(fc.constantFrom('a', ''), fc.jsonValue());

// Each field under its snake_case name, its deprecated camelCase alias, both or neither.
const toolCall = fc.record(
  {
    tool_name: toolName,
    arguments: toolArguments,
    agent_role: agentRole,
    tool: toolName,
    args: toolArguments,
    agentRole,
    context: fc.oneof(fc.record({ mode: fc.jsonValue() }, { requiredKeys: [] }), fc.jsonValue()),
  },
  { requiredKeys: [] },
);

const policyUri = fc.oneof(
  fc.constantFrom('svc://nato-prou-strict-financial@1.0.0', 'svc://x@1.0.0', 'svc://x'),
  fc.jsonValue(),
);
const toolCalls = fc.oneof(fc.array(toolCall, { maxLength: 3 }), fc.jsonValue());

const item = fc.record(
  {
    id: fc.oneof(text, fc.jsonValue()),
    policy: fc.oneof(
      policyObject,
      policyObject.map((p) => JSON.stringify(p)),
      text,
      fc.jsonValue(),
    ),
    policy_uri: policyUri,
    policyUri,
    tool_calls: toolCalls,
    toolCalls,
  },
  { requiredKeys: [] },
);

describe('batch validation never fails with a 5xx', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildPublicApp({
      logger: pino({ level: 'silent' }),
      readiness: createReadiness(),
      compliance: { rateLimit: { max: 1_000_000 } },
    });
  });
  afterAll(async () => {
    await app.close();
  });

  async function send(payload: string, contentType = 'application/json') {
    const response = await app.inject({
      method: 'POST',
      url: COMPLIANCE_BATCH_PATH,
      headers: { 'content-type': contentType },
      payload,
    });
    return { status: response.statusCode, body: response.json() as Json };
  }

  it('answers structured batches (valid and not) with the documented shapes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 4 }), async (items) => {
        const { status, body } = await send(JSON.stringify({ items }));
        expectContract(status, body);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('answers arbitrary JSON bodies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        const { status, body } = await send(JSON.stringify(value) ?? 'null');
        expectContract(status, body);
        expect(status).not.toBe(200);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('answers arbitrary strings as bodies, under any content type', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
        async (text, contentType) => {
          const { status, body } = await send(text, contentType);
          expectContract(status, body);
        },
      ),
      { numRuns: propertyRuns(200) },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
