// Fuzzing the inspect body with fast-check through the real app (`inject`: the same Fastify
// instance that listens, without sockets, so a few hundred runs stay fast). Whatever arrives,
// the answer is a 2xx or 4xx JSON object — a decision, or an error with a reasonCode — never a
// 5xx and never a crash; and no body can pollute Object.prototype.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { propertyRuns } from '../../support/property-runs.js';
import { quickDatabaseKind } from './support.js';

const INSPECT = '/api/v1/mcp/gateway/inspect';
const PASSTHROUGH_HEADERS = [
  'mcp-authorization',
  'x-upstream-authorization',
  'x-mcp-authorization',
];
const FUZZ_POLICY = {
  version: '1.0.0',
  policyName: 'fuzz-rules',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'hold',
      action: 'REQUIRE_HUMAN',
      condition: "args.text == 'hold'",
      alertSeverity: 'LOW',
    },
    { ruleId: 'sim', action: 'SIMULATE', condition: "args.text == 'sim'", alertSeverity: 'LOW' },
    { ruleId: 'block', action: 'BLOCK', condition: "args.text == 'block'", alertSeverity: 'LOW' },
  ],
};

/** Header values any HTTP client can carry: visible ASCII. */
const headerValue = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
  minLength: 1,
});

describe('inspect fuzzing (fast-check over app.inject)', () => {
  let gateway: TestGateway;
  let upstream: McpUpstream;
  let agentId: string;
  let polluted: string[];

  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
    gateway = await startTestGateway(quickDatabaseKind);
    agentId = gateway.tenant.agentId;
    const uri = await gateway.publishPolicy(gateway.tenant.id, FUZZ_POLICY);
    await gateway.registerServer({
      tenantId: gateway.tenant.id,
      serverId: 'files',
      url: upstream.url,
      mockResults: { echo: { content: [] } },
    });
    await gateway.setPolicy(gateway.tenant.id, {
      trustedServers: ['files'],
      blockedTools: ['blocked_*'],
      pinnedPolicies: [uri],
    });
    polluted = Object.getOwnPropertyNames(Object.prototype);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  async function send(
    payload: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await gateway.runtime.app.inject({
      method: 'POST',
      url: INSPECT,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${gateway.tenant.key}`,
        ...headers,
      },
      payload,
    });
    const status = response.statusCode;
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      throw new Error(`answer ${status} is not JSON: ${response.body.slice(0, 200)}`);
    }
    expectWellFormed(status, body);
    return { status, body: body as Record<string, unknown> };
  }

  function expectWellFormed(status: number, body: unknown): void {
    const shown = JSON.stringify(body)?.slice(0, 300);
    if (isShadowToUnknownServer(status, body)) return;
    expect(status, shown).toBeGreaterThanOrEqual(200);
    expect(status, shown).toBeLessThan(500);
    expect(typeof body === 'object' && body !== null && !Array.isArray(body), shown).toBe(true);
    const answer = body as Record<string, unknown>;
    if (status >= 400) {
      expect(typeof answer.reasonCode, shown).toBe('string');
    } else if (answer.decision === 'allow') {
      expect(answer.reasonCode, shown).toBeNull();
    } else {
      expect(answer, shown).toMatchObject({
        decision: 'require_human_approval',
        reasonCode: 'NPL_REQUIRE_HUMAN',
      });
    }
    if (answer.decision !== undefined) expect(typeof answer.inspectionId, shown).toBe('string');
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(polluted);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }

  /**
   * Shadow mode forwards whatever it would have denied, and a server the tenant never
   * registered cannot be reached (404, as in production for a whitelisted server without a
   * registration; modes.test.ts pins it).
   */
  function isShadowToUnknownServer(status: number, body: unknown): boolean {
    const answer = body as Record<string, unknown> | null;
    return (
      status === 404 &&
      answer?.reasonCode === 'MCP_SERVER_NOT_REGISTERED' &&
      answer.executionMode === 'shadow' &&
      (answer.shadow as { reasonCode?: unknown } | undefined)?.reasonCode ===
        'MCP_SERVER_NOT_WHITELISTED'
    );
  }

  const json = fc.jsonValue({ maxDepth: 4 });
  const args = fc.oneof(
    { arbitrary: fc.dictionary(fc.string(), json, { maxKeys: 5 }), weight: 3 },
    {
      arbitrary: fc.record({
        text: fc.constantFrom('hold', 'sim', 'block', 'hello', 'DROP TABLE t'),
      }),
      weight: 2,
    },
    { arbitrary: json, weight: 1 },
  );
  const tool = fc.oneof(
    {
      arbitrary: fc.constantFrom('echo', 'read_rows', 'drop_table', 'blocked_tool', 'fail'),
      weight: 3,
    },
    { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
  );
  /** Mostly the valid value (so runs get past validation into the pipeline), else anything. */
  const mostly = <T, U>(valid: fc.Arbitrary<T>, odd: fc.Arbitrary<U>) =>
    fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: odd, weight: 1 });
  /** Usually absent (undefined), sometimes a value. */
  const rarely = <T>(value: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary: value, weight: 1 });
  /** Bodies shaped like inspect requests whose every field may be valid, odd, or absent. */
  const inspectLike = fc
    .record(
      {
        agent: mostly(fc.constant('own'), fc.oneof(fc.string(), json)),
        executionId: mostly(fc.constant('exec-1'), fc.oneof(fc.string({ maxLength: 300 }), json)),
        server: mostly(fc.constantFrom('files', 'elsewhere'), fc.oneof(fc.string(), json)),
        tool,
        paramsName: mostly(fc.constant('same'), fc.oneof(tool, json)),
        mode: mostly(
          fc.constantFrom('production', 'simulation', 'shadow'),
          fc.oneof(fc.string(), json),
        ),
        jsonrpc: mostly(fc.constant('2.0'), json),
        id: mostly(fc.integer(), fc.oneof(fc.string({ maxLength: 300 }), json)),
        method: mostly(fc.constantFrom('tools/call', 'tools/list', 'prompts/get'), fc.string()),
        arguments: args,
        meta: rarely(fc.dictionary(fc.string({ maxLength: 12 }), json, { maxKeys: 3 })),
        requestExtra: rarely(fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 2 })),
        policy: rarely(fc.oneof(fc.constant('svc://fuzz-rules@1.0.0'), fc.string(), json)),
        approvalId: rarely(fc.oneof(fc.uuid(), fc.string(), json)),
        drop: rarely(
          fc.constantFrom(
            'agent_id',
            'execution_id',
            'server_id',
            'tool_name',
            'execution_mode',
            'request',
          ),
        ),
      },
      {
        requiredKeys: [
          'agent',
          'executionId',
          'server',
          'tool',
          'paramsName',
          'mode',
          'jsonrpc',
          'id',
          'method',
          'arguments',
        ],
      },
    )
    .map((f) => {
      const params: Record<string, unknown> = {
        name: f.paramsName === 'same' || f.paramsName === undefined ? f.tool : f.paramsName,
        arguments: f.arguments,
      };
      if (f.meta) params._meta = f.meta;
      const request: Record<string, unknown> = {
        ...(f.requestExtra ?? {}),
        jsonrpc: f.jsonrpc,
        id: f.id,
        method: f.method,
        params,
      };
      const body: Record<string, unknown> = {
        agent_id: f.agent === 'own' ? agentId : f.agent,
        execution_id: f.executionId,
        server_id: f.server,
        tool_name: f.tool,
        execution_mode: f.mode,
        request,
        ...(f.policy === undefined ? {} : { policy: f.policy }),
        ...(f.approvalId === undefined ? {} : { approval_id: f.approvalId }),
      };
      if (f.drop) delete body[f.drop];
      return body;
    });

  it('answers arbitrary JSON values', async () => {
    await fc.assert(
      fc.asyncProperty(json, async (value) => {
        await send(JSON.stringify(value));
      }),
      { numRuns: propertyRuns(70) },
    );
  });

  it('answers arbitrary inspect-shaped bodies', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(inspectLike, async (body) => {
        const { status, body: answer } = await send(JSON.stringify(body));
        seen.add(`${status} ${String(answer.reasonCode)}`);
      }),
      { numRuns: propertyRuns(130) },
    );
    // The generator reaches past validation: allows and pipeline denies, not only 400s.
    const outcomes = [...seen].sort();
    expect(
      outcomes.some((outcome) => outcome.startsWith('200')),
      outcomes.join(', '),
    ).toBe(true);
    expect(
      outcomes.some((outcome) => outcome.startsWith('403')),
      outcomes.join(', '),
    ).toBe(true);
  });

  it('answers arbitrary strings as raw bodies', async () => {
    const raw = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 200 }),
      json.map((value) => JSON.stringify(value).slice(0, -1)),
    );
    await fc.assert(
      fc.asyncProperty(raw, async (payload) => {
        await send(payload);
      }),
      { numRuns: propertyRuns(60) },
    );
  });

  it('answers with passthrough headers and odd content types', async () => {
    const headers = fc.record(
      {
        passthrough: fc.subarray(PASSTHROUGH_HEADERS, { minLength: 1 }),
        value: headerValue,
        contentType: fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded',
        ),
      },
      { requiredKeys: ['passthrough', 'value'] },
    );
    await fc.assert(
      fc.asyncProperty(inspectLike, headers, async (body, h) => {
        const extra: Record<string, string> = {};
        for (const name of h.passthrough) extra[name] = h.value;
        if (h.contentType) extra['content-type'] = h.contentType;
        const { status, body: answer } = await send(JSON.stringify(body), extra);
        // Whatever else is wrong, a presented upstream token is never accepted.
        expect(status).toBeGreaterThanOrEqual(400);
        expect(answer.decision ?? 'deny').toBe('deny');
      }),
      { numRuns: propertyRuns(40) },
    );
  });

  it('never lets a body pollute Object.prototype', async () => {
    const valid = JSON.stringify({
      agent_id: agentId,
      execution_id: 'e',
      server_id: 'files',
      tool_name: 'echo',
      execution_mode: 'simulation',
      request: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: {} },
      },
    });
    const injected = [
      '{"__proto__": {"polluted": 1}}',
      '{"constructor": {"prototype": {"polluted": 1}}}',
      valid.replace('"arguments":{}', '"arguments":{"__proto__":{"polluted":1}}'),
      valid.replace('"arguments":{}', '"arguments":{"constructor":{"prototype":{"polluted":1}}}'),
      valid.replace('"params":{', '"params":{"__proto__":{"polluted":1},'),
      valid.replace('{"agent_id"', '{"__proto__":{"polluted":1},"agent_id"'),
    ];
    for (const payload of injected) {
      const { status, body } = await send(payload);
      expect(status).toBe(400);
      expect(body.reasonCode).toBe('MCP_MALFORMED_RPC');
    }
    await fc.assert(
      fc.asyncProperty(
        inspectLike,
        fc.constantFrom('__proto__', 'constructor'),
        async (body, key) => {
          const text = JSON.stringify(body);
          const payload = text.replace(
            '"arguments":',
            `"arguments":{"${key}":{"prototype":{"polluted":1},"polluted":1},"x":`,
          );
          await send(payload);
        },
      ),
      { numRuns: propertyRuns(20) },
    );
  });
});
