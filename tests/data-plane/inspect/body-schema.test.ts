// The inspect body has one contract (body-schema.ts). request.ts puts a hand-written fast path in
// front of it for speed; these properties pin that the fast path never says yes where the schema
// says no, and that what the route parses is what the schema reads.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inspectBodySchema } from '../../../data-plane/governance/body-schema.js';
import { parseInspectRequest } from '../../../data-plane/governance/request.js';
import { propertyRuns } from '../../support/property-runs.js';

/** Each property's runs: the generator reaches a valid body in about one run of eighteen. */
const RUNS = propertyRuns(3000);
/** Mostly `valid`, sometimes `invalid`: the properties need both kinds of bodies. */
function mostly<T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>): fc.Arbitrary<T | U> {
  return fc.oneof({ arbitrary: valid, weight: 12 }, { arbitrary: invalid, weight: 1 });
}
const name = fc.string({ minLength: 1, maxLength: 12 });
const badValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
  fc.constantFrom('', 'a'.repeat(257)),
  fc.array(fc.string(), { maxLength: 2 }),
);
const body = fc.record(
  {
    agent_id: mostly(name, badValue),
    execution_id: mostly(name, badValue),
    server_id: mostly(name, badValue),
    tool_name: mostly(fc.constant('echo'), fc.constantFrom('other', '', 7)),
    execution_mode: mostly(
      fc.constantFrom('production', 'simulation', 'shadow'),
      fc.constantFrom('dry-run', 1),
    ),
    policy: mostly(fc.constantFrom(undefined, 'svc://p@1.0.0'), fc.integer()),
    approval_id: mostly(fc.option(name, { nil: undefined }), badValue),
    agent_credential: mostly(
      fc.option(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })), {
        nil: undefined,
      }),
      badValue,
    ),
    delegation_chain: mostly(
      fc.option(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), { nil: undefined }),
      fc.oneof(badValue, fc.constant(Array.from({ length: 33 }, () => ({})))),
    ),
    forward: mostly(fc.constantFrom(undefined, true, false), fc.constantFrom('false', 0, null)),
    request: mostly(
      fc.record(
        {
          jsonrpc: mostly(fc.constant('2.0'), fc.constantFrom('1.0', 2)),
          id: mostly(fc.oneof(fc.integer(), name), fc.constantFrom(null, 'a'.repeat(257))),
          method: mostly(fc.constantFrom('tools/call', 'tools/list'), fc.constantFrom('', 3)),
          params: mostly(
            fc.record({
              name: mostly(fc.constant('echo'), fc.constant('other')),
              arguments: mostly(
                fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })),
                badValue,
              ),
            }),
            badValue,
          ),
          extra: mostly(fc.constant(undefined), fc.integer()),
        },
        { requiredKeys: [] },
      ),
      badValue,
    ),
  },
  { requiredKeys: [] },
);

describe('inspect body: request.ts and body-schema.ts are one contract', () => {
  it('every body the route accepts, the schema accepts with the same values', () => {
    let accepted = 0;
    fc.assert(
      fc.property(body, (candidate) => {
        const json = JSON.parse(JSON.stringify(candidate)) as unknown;
        const parsed = parseInspectRequest(json);
        if (!parsed.ok) return;
        accepted++;
        const schema = inspectBodySchema.safeParse(json);
        expect(schema.success).toBe(true);
        if (!schema.success) return;
        const { value } = parsed;
        expect({
          agentId: value.agentId,
          executionId: value.executionId,
          serverId: value.serverId,
          toolName: value.toolName,
          mode: value.mode,
          policy: value.policy,
          approvalId: value.approvalId,
          agentCredential: value.agentCredential,
          delegationChain: value.delegationChain,
          forward: value.forward,
          rpc: { jsonrpc: value.rpc.jsonrpc, id: value.rpc.id, method: value.rpc.method },
        }).toEqual({
          agentId: schema.data.agent_id,
          executionId: schema.data.execution_id,
          serverId: schema.data.server_id,
          toolName: schema.data.tool_name,
          mode: schema.data.execution_mode,
          policy: schema.data.policy,
          approvalId: schema.data.approval_id,
          agentCredential: schema.data.agent_credential,
          delegationChain: schema.data.delegation_chain,
          forward: schema.data.forward !== false,
          rpc: {
            jsonrpc: schema.data.request.jsonrpc,
            id: schema.data.request.id,
            method: schema.data.request.method,
          },
        });
      }),
      { numRuns: RUNS, seed: 20261123 },
    );
    // The generator must reach valid bodies, or the property says nothing.
    expect(accepted).toBeGreaterThan(RUNS / 30);
  });

  it('every body the schema refuses, the route refuses as MCP_MALFORMED_RPC', () => {
    fc.assert(
      fc.property(body, (candidate) => {
        const json = JSON.parse(JSON.stringify(candidate)) as unknown;
        if (inspectBodySchema.safeParse(json).success) return;
        expect(parseInspectRequest(json).ok).toBe(false);
      }),
      { numRuns: RUNS, seed: 20261124 },
    );
  });
});
