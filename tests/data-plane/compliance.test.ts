import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPLIANCE_BATCH_PATH,
  type CompliancePluginOptions,
  rateLimitKey,
} from '../../data-plane/routes/compliance/index.js';
import { createReadiness } from '../../http-edge/health.js';
import { ERROR_CODES } from '../../shared/errors/index.js';
import { contentHash, parsePolicy } from '../../shared/npl/index.js';
import { YAML_POLICY } from '../support/npl-policies.js';
import { buildPublicApp } from '../support/public-app.js';

const JSON_POLICY = {
  version: '2.1.0',
  policyName: 'json-guard',
  targetAgents: ['analyst'],
  rules: [
    {
      ruleId: 'block_secrets',
      action: 'BLOCK',
      condition: "args.path.contains('secret')",
      alertSeverity: 'CRITICAL',
    },
  ],
};

/** Three problems: a wrong version type, a duplicate ruleId and two bad conditions. */
const INVALID_YAML = `version: 1
policyName: broken
targetAgents: ["*"]
rules:
  - ruleId: a
    action: BLOCK
    condition: "tools.name == 'x'"
    alertSeverity: LOW
  - ruleId: a
    action: ALLOW
    condition: "tool.name ==\\n  'y' &&"
    alertSeverity: LOW
`;

const NATO = 'svc://nato-prou-strict-financial@1.0.0';

async function build(compliance?: CompliancePluginOptions): Promise<FastifyInstance> {
  return buildPublicApp({
    logger: pino({ level: 'silent' }),
    readiness: createReadiness(),
    compliance,
  });
}

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are read loosely; the assertions check their shape.
type Json = Record<string, any>;

describe('POST /api/v1/public/compliance/validate/batch over HTTP', () => {
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    app = await build({ rateLimit: { max: 1000 } });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app.close();
  });

  async function post(body: unknown, contentType = 'application/json') {
    const response = await fetch(`${base}${COMPLIANCE_BATCH_PATH}`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Json,
    };
  }

  it('validates a YAML document and decides each tool call', async () => {
    const { status, body } = await post({
      items: [
        {
          id: 'yaml-1',
          policy: YAML_POLICY,
          toolCalls: [
            { tool: 'drop_table', args: { table: 'users' } },
            { tool: 'wire_transfer', args: { amount: 25_000 } },
            { tool: 'wire_transfer', args: { amount: 5 } },
            { tool: 'deploy', agentRole: 'tester', context: { mode: 'staging' } },
          ],
        },
      ],
    });
    expect(status).toBe(200);
    expect(body.valid).toBe(true);
    const item = body.items[0];
    expect(item).toMatchObject({
      index: 0,
      id: 'yaml-1',
      valid: true,
      policyName: 'payments-guard',
      policyVersion: '1.0.0',
      policyUri: 'svc://payments-guard@1.0.0',
      contentHash: contentHash(parsePolicy(YAML_POLICY)),
      errors: [],
    });
    expect(item.decisions.map((d: Json) => [d.tool, d.action, d.ruleId, d.matched])).toEqual([
      ['drop_table', 'BLOCK', 'block_drop', true],
      ['wire_transfer', 'REQUIRE_HUMAN', 'human_large_transfer', true],
      ['wire_transfer', 'ALLOW', 'npl_default_allow', false],
      ['deploy', 'SIMULATE', 'simulate_in_staging', true],
    ]);
    expect(item.decisions[0]).toEqual({
      tool: 'drop_table',
      action: 'BLOCK',
      ruleId: 'block_drop',
      matched: true,
      reason: "Rule block_drop matched: tool.name == 'drop_table'",
      alertSeverity: 'CRITICAL',
    });
    expect(body.limits).toMatchObject({ maxItems: 100, maxToolCalls: 1000, maxBodyBytes: 1048576 });
    expect(body.work).toBeGreaterThan(0);
  });

  it('accepts a policy given as a JSON object, with agent scope', async () => {
    const { status, body } = await post({
      items: [
        {
          policy: JSON_POLICY,
          toolCalls: [
            { tool: 'read', args: { path: '/etc/SECRET' }, agentRole: 'analyst' },
            { tool: 'read', args: { path: '/etc/SECRET' }, agentRole: 'intern' },
          ],
        },
      ],
    });
    expect(status).toBe(200);
    const item = body.items[0];
    expect(item.valid).toBe(true);
    expect(item.contentHash).toBe(contentHash(parsePolicy(JSON_POLICY)));
    expect(item.decisions.map((d: Json) => d.ruleId)).toEqual([
      'block_secrets',
      'npl_agent_not_in_scope',
    ]);
  });

  it('evaluates history given as usage per tool call, as the gateway does with its counters', async () => {
    const policy = {
      version: '1.0.0',
      policyName: 'spend-history',
      targetAgents: ['*'],
      rules: [
        {
          ruleId: 'hold_past_5000',
          action: 'REQUIRE_HUMAN',
          condition: "tool.name == 'send_payment' && usage.daily_payments.sumAfter > 5000",
          alertSeverity: 'MEDIUM',
        },
      ],
    };
    const call = (usage?: unknown) => ({
      tool_name: 'send_payment',
      arguments: { amount: 99 },
      ...(usage === undefined ? {} : { usage }),
    });
    const { status, body } = await post({
      items: [
        {
          policy,
          tool_calls: [
            call({ daily_payments: { sum: 4950, sumAfter: 5049, calls: 50, callsAfter: 51 } }),
            call({ daily_payments: { sum: 100, sumAfter: 199 } }),
            // Missing: NPL's missing-path rules (the comparison does not match).
            call(),
          ],
        },
      ],
    });
    expect(status).toBe(200);
    expect(body.items[0].decisions.map((d: Json) => d.action)).toEqual([
      'REQUIRE_HUMAN',
      'ALLOW',
      'ALLOW',
    ]);
    const invalid = await post({
      items: [{ policy, tool_calls: [call({ 'Bad-Id': { sum: -1, extra: 1 } })] }],
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.reasonCode).toBe('REQUEST_INVALID');
  });

  it('resolves a bundled pin', async () => {
    const { body } = await post({
      items: [
        { policyUri: NATO, toolCalls: [{ tool: 'wire_transfer', args: { amount: 50_000 } }] },
      ],
    });
    expect(body.items[0]).toMatchObject({
      valid: true,
      policyUri: NATO,
      policyName: 'nato-prou-strict-financial',
      policyVersion: '1.0.0',
    });
    expect(body.items[0].contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(body.items[0].decisions[0].action).toBe('REQUIRE_HUMAN');
  });

  it('reports an unknown or malformed pin as an item error and fails its calls closed', async () => {
    const { status, body } = await post({
      items: [
        { policyUri: 'svc://tenant-private@1.0.0', toolCalls: [{ tool: 'a' }, { tool: 'b' }] },
        { policyUri: 'svc://unpinned', toolCalls: [{ tool: 'a' }] },
      ],
    });
    expect(status).toBe(200);
    expect(body.valid).toBe(false);
    const [unknown, unpinned] = body.items;
    expect(unknown).toMatchObject({
      valid: false,
      error: 'NPL_REGISTRY_NOT_FOUND',
      policyUri: 'svc://tenant-private@1.0.0',
      errors: [{ code: 'invalid_uri', path: '$' }],
    });
    // A tenant's published version is not "unpublished": the answer says what this endpoint reads.
    expect(unknown.errors[0].message).toBe(
      'svc://tenant-private@1.0.0 is not a bundled policy: this public endpoint reads no tenant data, so it resolves only the bundled reference policies (svc://nato-prou-strict-financial@1.0.0, svc://eu-ai-act-art5-prohibited@1.0.0), not the versions a tenant publishes',
    );
    expect(unknown.errors[0].hint).toContain('docs/compliance-batch.md');
    expect(unknown.decisions[0].reason).toContain('resolves only the bundled reference policies');
    expect(unknown.contentHash).toBeUndefined();
    for (const d of [...unknown.decisions, ...unpinned.decisions]) {
      expect(d).toMatchObject({
        action: 'BLOCK',
        ruleId: 'NPL_REGISTRY_FAIL_CLOSED',
        matched: true,
        alertSeverity: 'CRITICAL',
      });
    }
    expect(unknown.decisions).toHaveLength(2);
    expect(unpinned).toMatchObject({ valid: false, error: 'NPL_INVALID_URI' });
    expect(unpinned.errors[0].message).toContain('not pinned');
  });

  it('reports every problem of an invalid document with its path and position', async () => {
    const { status, body } = await post({
      items: [{ policy: INVALID_YAML, toolCalls: [{ tool: 'x' }] }],
    });
    expect(status).toBe(200);
    const item = body.items[0];
    expect(item).toMatchObject({ valid: false, error: 'NPL_INVALID_DOCUMENT', decisions: [] });
    expect(item.contentHash).toBeUndefined();
    const byPath = Object.fromEntries(item.errors.map((e: Json) => [`${e.code} ${e.path}`, e]));
    expect(Object.keys(byPath).sort()).toEqual([
      'condition_syntax rules[1].condition',
      'duplicate_rule_id rules[1].ruleId',
      'invalid_type version',
      'unknown_identifier rules[0].condition',
    ]);
    expect(byPath['invalid_type version'].source).toEqual({ line: 1, column: 10 });
    expect(byPath['duplicate_rule_id rules[1].ruleId']).toMatchObject({
      message: expect.stringContaining('rules[0]'),
      source: { line: 9, column: 13 },
    });
    expect(byPath['unknown_identifier rules[0].condition']).toMatchObject({
      ruleIndex: 0,
      line: 1,
      column: 1,
      excerpt: "tools.name == 'x'\n^",
      source: { line: 7, column: 17 },
    });
    expect(byPath['condition_syntax rules[1].condition']).toMatchObject({
      ruleIndex: 1,
      line: 2,
      column: 9,
    });
  });

  it('answers a mixed batch with 200, valid false and per-item results in order', async () => {
    const { status, body } = await post({
      items: [
        { id: 'ok', policy: YAML_POLICY },
        { id: 'bad', policy: 'rules: [' },
        { id: 'pin', policyUri: NATO },
      ],
    });
    expect(status).toBe(200);
    expect(body.valid).toBe(false);
    expect(body.items.map((i: Json) => [i.index, i.id, i.valid])).toEqual([
      [0, 'ok', true],
      [1, 'bad', false],
      [2, 'pin', true],
    ]);
    expect(body.items[1].errors[0]).toMatchObject({ code: 'syntax', path: '$' });
    expect(body.items[1].errors[0].source.line).toBeGreaterThan(0);
  });

  it('refuses a body that is not JSON, and a non-JSON content type', async () => {
    const notJson = await post('{"items": [');
    expect([notJson.status, notJson.body.reasonCode]).toEqual([400, 'REQUEST_INVALID']);
    const text = await post('items', 'text/plain');
    expect([text.status, text.body.reasonCode]).toEqual([415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE']);
    expect(text.body).toMatchObject({
      error: 'REQUEST_UNSUPPORTED_MEDIA_TYPE',
      hint: expect.any(String),
    });
  });

  it('refuses a body over 1 MiB with 413 REQUEST_TOO_LARGE', async () => {
    const big = { items: [{ policy: 'x'.repeat(1024 * 1024) }] };
    const { status, body } = await post(big);
    expect([status, body.reasonCode]).toEqual([413, 'REQUEST_TOO_LARGE']);
    expect(body.message).toBe(
      'the body of POST /api/v1/public/compliance/validate/batch is larger than its limit of 1048576 bytes (1 MiB)',
    );
  });

  it('refuses __proto__ keys with 400 and pollutes nothing', async () => {
    const { status, body } = await post(
      '{"items":[{"policyUri":"svc://a@1.0.0","toolCalls":[{"tool":"t","args":{"__proto__":{"polluted":true}}}]}]}',
    );
    expect([status, body.reasonCode]).toEqual([400, 'REQUEST_INVALID']);
    const ctor = await post('{"items":[{"constructor":{"prototype":{"polluted":true}}}]}');
    expect([ctor.status, ctor.body.reasonCode]).toEqual([400, 'REQUEST_INVALID']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('batch envelope and limits', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await build({ rateLimit: { max: 100_000 } });
  });
  afterAll(async () => {
    await app.close();
  });

  async function post(payload: unknown) {
    const response = await app.inject({
      method: 'POST',
      url: COMPLIANCE_BATCH_PATH,
      headers: { 'content-type': 'application/json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    return { status: response.statusCode, body: response.json() as Json };
  }

  const call = { tool: 't' };
  const cases: [string, unknown, number, string, string?][] = [
    ['a JSON array body', [], 400, 'REQUEST_INVALID'],
    ['a JSON string body', '"items"', 400, 'REQUEST_INVALID'],
    ['an empty JSON body', '', 400, 'REQUEST_INVALID'],
    ['items missing', {}, 400, 'REQUEST_INVALID', 'items'],
    ['items not an array', { items: { policyUri: NATO } }, 400, 'REQUEST_INVALID', 'items'],
    ['items empty', { items: [] }, 400, 'REQUEST_INVALID', 'items'],
    ['an unknown top-level field', { items: [{ policyUri: NATO }], x: 1 }, 400, 'REQUEST_INVALID'],
    ['an item that is not an object', { items: [1] }, 400, 'REQUEST_INVALID', 'items[0]'],
    [
      'both policy and policyUri',
      { items: [{ policy: 'a', policyUri: NATO }] },
      400,
      'REQUEST_INVALID',
      'items[0]',
    ],
    [
      'neither policy nor policyUri',
      { items: [{ toolCalls: [call] }] },
      400,
      'REQUEST_INVALID',
      'items[0]',
    ],
    [
      'a policy that is a number',
      { items: [{ policy: 5 }] },
      400,
      'REQUEST_INVALID',
      'items[0].policy',
    ],
    [
      'a policy that is an array',
      { items: [{ policy: [] }] },
      400,
      'REQUEST_INVALID',
      'items[0].policy',
    ],
    [
      'a policyUri that is not a string',
      { items: [{ policyUri: 1 }] },
      400,
      'REQUEST_INVALID',
      'items[0].policyUri',
    ],
    [
      'an id over 128 characters',
      { items: [{ id: 'i'.repeat(129), policyUri: NATO }] },
      400,
      'REQUEST_INVALID',
      'items[0].id',
    ],
    [
      'toolCalls not an array',
      { items: [{ policyUri: NATO, toolCalls: call }] },
      400,
      'REQUEST_INVALID',
      'items[0].toolCalls',
    ],
    [
      'a tool that is a number (no coercion)',
      { items: [{ policyUri: NATO, toolCalls: [{ tool: 5 }] }] },
      400,
      'REQUEST_INVALID',
      'items[0].toolCalls[0].tool',
    ],
    [
      'args that are an array',
      { items: [{ policyUri: NATO, toolCalls: [{ tool: 't', args: [] }] }] },
      400,
      'REQUEST_INVALID',
      'items[0].toolCalls[0].args',
    ],
    [
      'an unknown context root',
      { items: [{ policyUri: NATO, toolCalls: [{ tool: 't', context: { tool: {} } }] }] },
      400,
      'REQUEST_INVALID',
      'items[0].toolCalls[0].context.tool',
    ],
    [
      '101 items',
      { items: Array.from({ length: 101 }, () => ({ policyUri: NATO })) },
      413,
      'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
    ],
    [
      '1 001 tool calls',
      {
        items: [
          { policyUri: NATO, toolCalls: Array(600).fill(call) },
          { policyUri: NATO, toolCalls: Array(401).fill(call) },
        ],
      },
      413,
      'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
    ],
    [
      'a policy over 256 KiB',
      { items: [{ policy: `# ${'x'.repeat(256 * 1024)}` }] },
      413,
      'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
    ],
    [
      'inline policies over 384 KiB in all',
      { items: [1, 2, 3].map(() => ({ policy: `# ${'x'.repeat(200 * 1024)}` })) },
      413,
      'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
    ],
  ];
  it.each(cases)('refuses %s', async (_name, payload, status, reasonCode, path) => {
    const { status: got, body } = await post(payload);
    expect([got, body.reasonCode]).toEqual([status, reasonCode]);
    expect(body).toMatchObject({
      error: reasonCode,
      message: expect.any(String),
      hint: expect.any(String),
    });
    if (path !== undefined) expect(body.path).toBe(path);
  });

  it('names the limit, its maximum and the value sent in a 413', async () => {
    const { body } = await post({
      items: Array.from({ length: 101 }, () => ({ policyUri: NATO })),
    });
    expect(body).toMatchObject({ limit: 'maxItems', max: 100, actual: 101 });
    expect(ERROR_CODES.COMPLIANCE_BATCH_LIMIT_EXCEEDED.status).toBe(413);
  });

  it('checks the item count before looking at any item', async () => {
    const { status } = await post({ items: Array.from({ length: 101 }, () => 'not an item') });
    expect(status).toBe(413);
  });

  it('accepts exactly 100 items and 1 000 tool calls', async () => {
    const items = Array.from({ length: 100 }, () => ({
      policyUri: NATO,
      toolCalls: Array(10).fill(call),
    }));
    const { status, body } = await post({ items });
    expect(status).toBe(200);
    expect(body.items).toHaveLength(100);
    expect(body.items.every((i: Json) => i.decisions.length === 10)).toBe(true);
  });

  it('refuses JSON nested deeper than 64 levels with 400', async () => {
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const at = (n: number) =>
      `{"items":[{"policyUri":"${NATO}","toolCalls":[{"tool":"t","args":${deep(n)}}]}]}`;
    // body, items, item, toolCalls, call, args: args is level 6.
    expect((await post(at(64 - 5))).status).toBe(200);
    const tooDeep = await post(at(64 - 4));
    expect([tooDeep.status, tooDeep.body.reasonCode]).toEqual([400, 'REQUEST_INVALID']);
    expect(tooDeep.body.message).toContain('64');
    const hostile = await post(`{"items":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    expect([hostile.status, hostile.body.reasonCode]).toEqual([400, 'REQUEST_INVALID']);
  });

  it('refuses a deeply nested policy text as an item error, before the YAML parser sees it', async () => {
    const deep = `${'['.repeat(2000)}${']'.repeat(2000)}`;
    for (let i = 0; i < 3; i++) {
      const { status, body } = await post({
        items: [{ policy: deep }, { policy: `{a: ${deep}}` }],
      });
      expect(status).toBe(200);
      expect(body.items[0]).toMatchObject({
        valid: false,
        error: 'NPL_INVALID_DOCUMENT',
        errors: [{ code: 'limit_exceeded', path: '$' }],
      });
    }
  });

  it('charges evaluation work against a budget and refuses the batch before evaluating', async () => {
    const pattern = "args.a.matches('(.|..){100}c')";
    const policy = { ...JSON_POLICY, targetAgents: ['*'] };
    policy.rules = [{ ...JSON_POLICY.rules[0]!, condition: pattern }];
    const toolCalls = Array.from({ length: 20 }, () => ({
      tool: 't',
      args: { a: 'é'.repeat(2000) },
    }));
    const { status, body } = await post({ items: [{ policy, toolCalls }] });
    expect([status, body.reasonCode, body.limit]).toEqual([
      413,
      'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
      'maxWork',
    ]);
    expect(body.actual).toBeGreaterThan(body.max);
    const fewer = await post({ items: [{ policy, toolCalls: toolCalls.slice(0, 2) }] });
    expect(fewer.status).toBe(200);
    expect(fewer.body.work).toBeLessThan(fewer.body.limits.maxWork);
  });
});

describe('rate limit', () => {
  it('answers the 4th request of a client within the window with 429, Retry-After and RATE_LIMITED', async () => {
    const app = await build({ rateLimit: { max: 3, timeWindowMs: 60_000 } });
    try {
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const send = () =>
        fetch(`${base}${COMPLIANCE_BATCH_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ items: [{ policyUri: NATO }] }),
        });
      for (let i = 0; i < 3; i++) expect((await send()).status).toBe(200);
      const limited = await send();
      expect(limited.status).toBe(429);
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const body = (await limited.json()) as Json;
      expect(body).toMatchObject({
        error: 'RATE_LIMITED',
        reasonCode: 'RATE_LIMITED',
        hint: ERROR_CODES.RATE_LIMITED.hint,
        retryAfterSeconds: retryAfter,
      });
      expect(body.message).toContain('3 requests per 1 min');

      // Per client address: another peer still gets through; X-Forwarded-For changes nothing.
      const other = await app.inject({
        method: 'POST',
        url: COMPLIANCE_BATCH_PATH,
        remoteAddress: '192.0.2.7',
        payload: { items: [{ policyUri: NATO }] },
      });
      expect(other.statusCode).toBe(200);
      const spoofed = await fetch(`${base}${COMPLIANCE_BATCH_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.1' },
        body: JSON.stringify({ items: [{ policyUri: NATO }] }),
      });
      expect(spoofed.status).toBe(429);
      // Other routes are not limited.
      for (let i = 0; i < 5; i++) expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('keys clients by request.ip', () => {
    expect(rateLimitKey({ ip: '203.0.113.9' })).toBe('203.0.113.9');
  });

  it('counts refused bodies too, since the limit runs before the body is read', async () => {
    const app = await build({ rateLimit: { max: 1 } });
    try {
      const send = () =>
        app.inject({
          method: 'POST',
          url: COMPLIANCE_BATCH_PATH,
          headers: { 'content-type': 'application/json' },
          payload: '{',
        });
      expect((await send()).statusCode).toBe(400);
      expect((await send()).statusCode).toBe(429);
    } finally {
      await app.close();
    }
  });
});
