// A malformed inspect body is answered 400 MCP_MALFORMED_RPC (audited like every deny) with a
// message naming the wrong field and a hint about that field: a wrong execution_mode is not
// answered with advice about the JSON-RPC `request`, and a policy that is not svc://name@semver
// is said to be malformed, not "not published".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSPECT_FIELD_HINTS } from '../../../data-plane/governance/body-schema.js';
import { ERROR_CODES } from '../../../shared/errors/index.js';
import { EXECUTION_MODES } from '../../../shared/snapshot/index.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { expectDeny } from './support.js';

describe('inspect: a malformed body gets the hint of its wrong field', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway('pglite');
  });
  afterAll(() => gateway?.close());

  const body = (overrides: Parameters<typeof inspectBody>[1] = {}) =>
    inspectBody(gateway.tenant.agentId, overrides);

  async function expectMalformed(sent: unknown, field: string, rpcId: number | null = 1) {
    const answer = await gateway.inspect(sent);
    await expectDeny(gateway, answer, {
      status: 400,
      reasonCode: 'MCP_MALFORMED_RPC',
      tenantId: gateway.tenant.id,
      rpcId,
    });
    expect(answer.body.message).toMatch(new RegExp(`^${field}\\b`));
    expect(answer.body.docs).toBe('docs/inspect.md#request');
    return answer.body;
  }

  it('an unknown execution_mode: the hint lists the modes, not the JSON-RPC request', async () => {
    const answer = await expectMalformed(body({ mode: 'dry-run' }), 'execution_mode');
    const modes = EXECUTION_MODES.join(', ');
    const quoted = EXECUTION_MODES.map((mode) => `"${mode}"`).join(', ');
    expect(answer.message).toBe(`execution_mode must be one of ${quoted}`);
    expect(answer.issues).toEqual([
      { field: 'execution_mode', message: `must be one of ${quoted}` },
    ]);
    expect(answer.hint).toBe(INSPECT_FIELD_HINTS.execution_mode);
    expect(answer.hint).toContain(modes);
    expect(answer.hint).not.toContain('jsonrpc');
  });

  it('a policy that is not svc://name@semver is malformed, with the expected form', async () => {
    for (const policy of ['svc://nope', 'nope', 'svc://Upper@1.0.0']) {
      const answer = await expectMalformed(body({ policy }), 'policy');
      expect(answer.message).toBe('policy must be a policy URI, svc://name@semver');
      expect(answer.hint).toBe(INSPECT_FIELD_HINTS.policy);
      expect(answer.reasonCode).not.toBe('NPL_REGISTRY_FAIL_CLOSED');
    }
  });

  it('a wrong member of request: the hint shows the JSON-RPC call', async () => {
    const sent = body();
    (sent.request as Record<string, unknown>).jsonrpc = '1.0';
    const answer = await expectMalformed(sent, 'request.jsonrpc');
    expect(answer.hint).toBe(INSPECT_FIELD_HINTS.request);
    expect(answer.hint).toContain('"jsonrpc":"2.0"');
  });

  it('tool_name differing from request.params.name: the hint is about tool_name', async () => {
    const answer = await expectMalformed({ ...body(), tool_name: 'other' }, 'tool_name');
    expect(answer.hint).toBe(INSPECT_FIELD_HINTS.tool_name);
  });

  it('a body that is not an object keeps the registry hint', async () => {
    const answer = await expectMalformed([1, 2], 'the body', null);
    expect(answer.issues).toEqual([
      { field: '(body)', message: 'must be a JSON object, not an array' },
    ]);
    expect(answer.hint).toBe(ERROR_CODES.MCP_MALFORMED_RPC.hint);
  });
});
