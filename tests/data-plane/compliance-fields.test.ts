// The batch request's field names: snake_case as every REST request (tool_calls, tool_name,
// arguments, agent_role, policy_uri), the first release's camelCase names accepted as deprecated
// aliases field by field, and a field sent under both names with different values refused.
// compliance.test.ts keeps the camelCase bodies, so it covers the aliases.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPLIANCE_BATCH_PATH } from '../../data-plane/routes/compliance/index.js';
import { createReadiness } from '../../http-edge/health.js';
import { contentHash, parsePolicy } from '../../shared/npl/index.js';
import { YAML_POLICY } from '../support/npl-policies.js';
import { buildPublicApp } from '../support/public-app.js';

const NATO = 'svc://nato-prou-strict-financial@1.0.0';

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

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are read loosely; the assertions check their shape.
type Json = Record<string, any>;

let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  app = await buildPublicApp({
    logger: pino({ level: 'silent' }),
    readiness: createReadiness(),
    compliance: { rateLimit: { max: 100_000 } },
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app.close();
});

async function post(body: unknown) {
  const response = await fetch(`${base}${COMPLIANCE_BATCH_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const decisionsOf = (item: Json) =>
  item.decisions.map((d: Json) => [d.tool, d.action, d.ruleId, d.matched]);

describe('snake_case request fields', () => {
  it('validates a YAML document and decides each tool call', async () => {
    const { status, body } = await post({
      items: [
        {
          id: 'yaml-1',
          policy: YAML_POLICY,
          tool_calls: [
            { tool_name: 'drop_table', arguments: { table: 'users' } },
            { tool_name: 'wire_transfer', arguments: { amount: 25_000 } },
            { tool_name: 'wire_transfer', arguments: { amount: 5 } },
            { tool_name: 'deploy', agent_role: 'tester', context: { mode: 'staging' } },
          ],
        },
      ],
    });
    expect(status).toBe(200);
    expect(body.items[0]).toMatchObject({
      index: 0,
      id: 'yaml-1',
      valid: true,
      policyName: 'payments-guard',
      policyUri: 'svc://payments-guard@1.0.0',
      contentHash: contentHash(parsePolicy(YAML_POLICY)),
      errors: [],
    });
    expect(decisionsOf(body.items[0])).toEqual([
      ['drop_table', 'BLOCK', 'block_drop', true],
      ['wire_transfer', 'REQUIRE_HUMAN', 'human_large_transfer', true],
      ['wire_transfer', 'ALLOW', 'npl_default_allow', false],
      ['deploy', 'SIMULATE', 'simulate_in_staging', true],
    ]);
  });

  it('applies agent_role to the policy scope', async () => {
    const { body } = await post({
      items: [
        {
          policy: JSON_POLICY,
          tool_calls: [
            { tool_name: 'read', arguments: { path: '/etc/SECRET' }, agent_role: 'analyst' },
            { tool_name: 'read', arguments: { path: '/etc/SECRET' }, agent_role: 'intern' },
          ],
        },
      ],
    });
    expect(body.items[0].decisions.map((d: Json) => d.ruleId)).toEqual([
      'block_secrets',
      'npl_agent_not_in_scope',
    ]);
  });

  it('resolves a bundled pin from policy_uri, and fails an unknown one closed', async () => {
    const { body } = await post({
      items: [
        {
          policy_uri: NATO,
          tool_calls: [{ tool_name: 'wire_transfer', arguments: { amount: 5e4 } }],
        },
        { policy_uri: 'svc://tenant-private@1.0.0', tool_calls: [{ tool_name: 'a' }] },
      ],
    });
    expect(body.items[0]).toMatchObject({ valid: true, policyUri: NATO });
    expect(body.items[0].decisions[0].action).toBe('REQUIRE_HUMAN');
    expect(body.items[1]).toMatchObject({
      valid: false,
      error: 'NPL_REGISTRY_NOT_FOUND',
      policyUri: 'svc://tenant-private@1.0.0',
    });
    expect(body.items[1].decisions[0].ruleId).toBe('NPL_REGISTRY_FAIL_CLOSED');
  });

  it('answers with the same camelCase names whichever spelling was sent', async () => {
    const call = { tool_name: 'wire_transfer', arguments: { amount: 25_000 }, agent_role: 'x' };
    const snake = await post({ items: [{ id: 'i', policy: YAML_POLICY, tool_calls: [call] }] });
    const camel = await post({
      items: [
        {
          id: 'i',
          policy: YAML_POLICY,
          toolCalls: [{ tool: 'wire_transfer', args: { amount: 25_000 }, agentRole: 'x' }],
        },
      ],
    });
    expect(snake.status).toBe(200);
    expect(snake.body).toEqual(camel.body);
    expect(Object.keys(snake.body.items[0])).toContain('policyUri');
  });
});

describe('deprecated camelCase aliases', () => {
  it('are accepted field by field, mixed with the snake_case names', async () => {
    const { status, body } = await post({
      items: [
        {
          policy: YAML_POLICY,
          tool_calls: [
            { tool: 'wire_transfer', arguments: { amount: 25_000 } },
            { tool_name: 'wire_transfer', args: { amount: 25_000 } },
            { tool_name: 'deploy', agentRole: 'tester', context: { mode: 'staging' } },
          ],
        },
        { policyUri: NATO, tool_calls: [{ tool_name: 'drop_table' }] },
        { policy_uri: NATO, toolCalls: [{ tool: 'drop_table', agent_role: 'a' }] },
      ],
    });
    expect(status).toBe(200);
    expect(decisionsOf(body.items[0])).toEqual([
      ['wire_transfer', 'REQUIRE_HUMAN', 'human_large_transfer', true],
      ['wire_transfer', 'REQUIRE_HUMAN', 'human_large_transfer', true],
      ['deploy', 'SIMULATE', 'simulate_in_staging', true],
    ]);
    expect(body.items[1].decisions[0].action).toBe('BLOCK');
    expect(body.items[2].decisions[0].action).toBe('BLOCK');
  });

  it('may repeat a field under both names when the values agree', async () => {
    const { status, body } = await post({
      items: [
        {
          policy_uri: NATO,
          policyUri: NATO,
          tool_calls: [{ tool_name: 'drop_table', arguments: { a: [1, { b: 2 }] } }],
          toolCalls: [{ tool: 'drop_table', args: { a: [1, { b: 2 }] } }],
        },
        {
          policy_uri: NATO,
          tool_calls: [{ tool_name: 't', tool: 't', arguments: { n: 1 }, args: { n: 1 } }],
        },
      ],
    });
    expect(status).toBe(200);
    expect(body.items[0].decisions).toHaveLength(1);
    expect(body.items[1].decisions).toHaveLength(1);
  });

  it('are documented as deprecated in the OpenAPI document, the snake_case names are not', () => {
    const spec = JSON.parse(
      readFileSync(new URL('../../schema/openapi.json', import.meta.url), 'utf8'),
    );
    const body =
      spec.paths[COMPLIANCE_BATCH_PATH].post.requestBody.content['application/json'].schema;
    const item = body.properties.items.items;
    const call = item.properties.tool_calls.items;
    const deprecated = (props: Json) =>
      Object.keys(props).filter((name) => props[name].deprecated === true);
    expect(deprecated(item.properties)).toEqual(['policyUri', 'toolCalls']);
    expect(deprecated(call.properties)).toEqual(['agentRole', 'args', 'tool']);
    expect(item.properties.toolCalls.items).toEqual(call);
  });
});

describe('a field sent under both names with different values', () => {
  const cases: [string, unknown, string, string][] = [
    [
      'tool_name and tool',
      { items: [{ policy_uri: NATO, tool_calls: [{ tool_name: 'a', tool: 'b' }] }] },
      'items[0].tool_calls[0]',
      'has both tool_name and tool (its deprecated alias) with different values; send tool_name only',
    ],
    [
      'arguments and args',
      {
        items: [
          {
            policy_uri: NATO,
            tool_calls: [{ tool_name: 'a', arguments: { n: 1 }, args: { n: 2 } }],
          },
        ],
      },
      'items[0].tool_calls[0]',
      'has both arguments and args (its deprecated alias) with different values; send arguments only',
    ],
    [
      'agent_role and agentRole',
      {
        items: [
          { policy_uri: NATO, tool_calls: [{ tool_name: 'a', agent_role: 'x', agentRole: 'y' }] },
        ],
      },
      'items[0].tool_calls[0]',
      'has both agent_role and agentRole (its deprecated alias) with different values; send agent_role only',
    ],
    [
      'policy_uri and policyUri',
      { items: [{ policy_uri: NATO, policyUri: 'svc://eu-ai-act-art5-prohibited@1.0.0' }] },
      'items[0]',
      'has both policy_uri and policyUri (its deprecated alias) with different values; send policy_uri only',
    ],
    [
      'tool_calls and toolCalls',
      {
        items: [{ policy_uri: NATO, tool_calls: [{ tool_name: 'a' }], toolCalls: [{ tool: 'b' }] }],
      },
      'items[0]',
      'has both tool_calls and toolCalls (its deprecated alias) with different values; send tool_calls only',
    ],
  ];
  it.each(cases)(
    'refuses %s with 400 REQUEST_INVALID naming both',
    async (_n, payload, path, problem) => {
      const { status, body } = await post(payload);
      expect([status, body.reasonCode]).toEqual([400, 'REQUEST_INVALID']);
      expect(body.path).toBe(path);
      // `path` keeps the first release's bracket form; `issues` name fields as every route does.
      const field = path.replace(/\[(\d+)\]/g, '.$1');
      expect(body.message).toContain(`${field} ${problem}`);
      expect(body.issues).toEqual([{ field, message: problem }]);
      expect(body.docs).toBe('docs/compliance-batch.md#request');
    },
  );
});

describe('bad snake_case fields', () => {
  const cases: [string, unknown, string][] = [
    [
      'a missing tool_name',
      { items: [{ policy_uri: NATO, tool_calls: [{}] }] },
      'items[0].tool_calls[0].tool_name',
    ],
    [
      'a tool_name that is a number (no coercion)',
      { items: [{ policy_uri: NATO, tool_calls: [{ tool_name: 5 }] }] },
      'items[0].tool_calls[0].tool_name',
    ],
    [
      'an empty tool_name',
      { items: [{ policy_uri: NATO, tool_calls: [{ tool_name: '' }] }] },
      'items[0].tool_calls[0].tool_name',
    ],
    [
      'arguments that are an array',
      { items: [{ policy_uri: NATO, tool_calls: [{ tool_name: 't', arguments: [] }] }] },
      'items[0].tool_calls[0].arguments',
    ],
    [
      'an agent_role that is not a string',
      { items: [{ policy_uri: NATO, tool_calls: [{ tool_name: 't', agent_role: 1 }] }] },
      'items[0].tool_calls[0].agent_role',
    ],
    ['a policy_uri that is not a string', { items: [{ policy_uri: 1 }] }, 'items[0].policy_uri'],
    [
      'tool_calls not an array',
      { items: [{ policy_uri: NATO, tool_calls: {} }] },
      'items[0].tool_calls',
    ],
    ['both policy and policy_uri', { items: [{ policy: 'a', policy_uri: NATO }] }, 'items[0]'],
    ['neither policy nor policy_uri', { items: [{ tool_calls: [] }] }, 'items[0]'],
    [
      'an unknown field of a call',
      { items: [{ policy_uri: NATO, tool_calls: [{ tool_name: 't', toolName: 't' }] }] },
      'items[0].tool_calls[0].toolName',
    ],
  ];
  it.each(cases)('refuses %s with 400 REQUEST_INVALID and its path', async (_n, payload, path) => {
    const { status, body } = await post(payload);
    expect([status, body.reasonCode, body.path]).toEqual([400, 'REQUEST_INVALID', path]);
  });

  it('counts tool calls sent under both names once against the limit', async () => {
    const calls = Array.from({ length: 600 }, () => ({ tool_name: 't' }));
    const same = await post({ items: [{ policy_uri: NATO, tool_calls: calls, toolCalls: calls }] });
    expect(same.status).toBe(200);
    const over = await post({
      items: [
        { policy_uri: NATO, tool_calls: calls },
        { policy_uri: NATO, toolCalls: calls.slice(0, 401) },
      ],
    });
    expect([over.status, over.body.reasonCode, over.body.limit]).toEqual([
      413,
      'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
      'maxToolCalls',
    ]);
  });
});

describe('warnings', () => {
  const ALWAYS_FALSE = `version: "1.0.0"
policyName: amount-guard
targetAgents: ["*"]
rules:
  - ruleId: block_big
    action: BLOCK
    condition: "tool.name == 'pay' && args.amount > 'lots'"
    alertSeverity: CRITICAL
`;
  const warning = {
    code: 'always_false',
    message: "> compares numbers, and 'lots' is not a number: always false",
    path: 'rules[0].condition',
    hint: 'use == or a string method for text',
    ruleIndex: 0,
    line: 1,
    column: 37,
    excerpt: "tool.name == 'pay' && args.amount > 'lots'\n                                    ^",
    source: { line: 7, column: 53 },
  };

  it('returns an always-false comparison as a warning of a valid item, which evaluates it to false', async () => {
    const amounts = [1e9, -1, 0, 'lots', 'zzz', '', null, true, [5], { n: 1 }];
    const { status, body } = await post({
      items: [
        {
          policy: ALWAYS_FALSE,
          tool_calls: [
            ...amounts.map((amount) => ({ tool_name: 'pay', arguments: { amount } })),
            { tool_name: 'pay', arguments: {} },
            { tool_name: 'pay' },
          ],
        },
        { policy_uri: NATO, tool_calls: [] },
      ],
    });
    expect(status).toBe(200);
    expect(body.valid).toBe(true);
    expect(body.items[0]).toMatchObject({ valid: true, errors: [], warnings: [warning] });
    expect(body.items[0].decisions).toHaveLength(amounts.length + 2);
    for (const d of body.items[0].decisions) {
      expect(d).toMatchObject({ action: 'ALLOW', ruleId: 'npl_default_allow', matched: false });
    }
    expect(body.items[1].warnings).toEqual([]);
  });

  it('returns the warnings of an invalid item next to its errors', async () => {
    const { body } = await post({
      items: [
        { policy: ALWAYS_FALSE.replace('BLOCK', 'STOP'), tool_calls: [{ tool_name: 'pay' }] },
      ],
    });
    expect(body.items[0]).toMatchObject({
      valid: false,
      error: 'NPL_INVALID_DOCUMENT',
      errors: [{ code: 'invalid_value', path: 'rules[0].action' }],
      warnings: [warning],
      decisions: [],
    });
  });

  it('has no source position for a policy sent as an object', async () => {
    const policy = JSON.parse(JSON.stringify(parsePolicy(ALWAYS_FALSE)));
    const { body } = await post({ items: [{ policy }] });
    const { source: _source, ...positioned } = warning;
    expect(body.items[0].warnings).toEqual([positioned]);
  });
});
