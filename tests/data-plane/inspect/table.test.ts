// Every row of the inspect status table (DESIGN.md §4) over real HTTP, in production mode against
// a real MCP server built with the official SDK: the exact status, decision and reasonCode, the
// JSON-RPC error a blocked MCP client sees, that the upstream received nothing (not even an
// initialize), and that the deny is already in the audit trail when the answer arrives.
// The approval rows (APPROVAL_*) are in approvals.test.ts, the mode rows in modes.test.ts.
// runPipeline's decisions alone, over compiled snapshots in milliseconds, are pinned down in
// tests/data-plane/governance/pipeline.test.ts; this file is the walk through the real server.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../../control-plane/services/tenants.js';
import { describeEachDatabase } from '../../support/databases.js';
import {
  inspectBody,
  startTestGateway,
  type TestGateway,
  type TestTenant,
} from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import {
  closedPortUrl,
  countAuditEntries,
  expectDeny,
  findAuditEntry,
  killAgent,
  totalCalls,
} from './support.js';

const INSPECT = '/api/v1/mcp/gateway/inspect';

const TABLE_POLICY = {
  version: '1.0.0',
  policyName: 'table-rules',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'block_forbidden_text',
      action: 'BLOCK',
      condition: "tool.name == 'echo' && args.text == 'npl-block'",
      alertSeverity: 'CRITICAL',
    },
    {
      ruleId: 'hold_for_human',
      action: 'REQUIRE_HUMAN',
      condition: "tool.name == 'echo' && args.text == 'needs-human'",
      alertSeverity: 'MEDIUM',
    },
  ],
};

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describeEachDatabase('inspect status table (production, SDK upstream)', (kind) => {
  let gateway: TestGateway;
  let upstream: McpUpstream;
  let tenant: TestTenant;
  let other: TestTenant;
  let policyUri: string;

  const production = (overrides: Parameters<typeof inspectBody>[1] = {}) =>
    inspectBody(tenant.agentId, { mode: 'production', ...overrides });

  /** Runs `send` and asserts the upstream saw no HTTP request at all meanwhile. */
  async function withoutForward<T>(send: () => Promise<T>): Promise<T> {
    const requests = upstream.requests;
    const calls = totalCalls(upstream);
    const result = await send();
    expect(upstream.requests, 'HTTP requests reaching the upstream').toBe(requests);
    expect(totalCalls(upstream), 'tool calls run by the upstream').toBe(calls);
    return result;
  }

  async function post(headers: Record<string, string>, body: unknown = production()) {
    const response = await fetch(`${gateway.url}${INSPECT}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
    gateway = await startTestGateway(kind, { upstream: { readTimeoutMs: 2_000 } });
    tenant = gateway.tenant;
    policyUri = await gateway.publishPolicy(tenant.id, TABLE_POLICY);
    await gateway.registerServer({ tenantId: tenant.id, serverId: 'files', url: upstream.url });
    await gateway.registerServer({
      tenantId: tenant.id,
      serverId: 'down',
      url: await closedPortUrl(),
    });
    await gateway.setPolicy(tenant.id, {
      trustedServers: ['files', 'down', 'ghost'],
      blockedMethods: ['prompts/get', 'resources/*'],
      blockedTools: ['danger_*', 'forbidden'],
      pinnedPolicies: [policyUri],
    });
    other = await gateway.addTenant();
    await gateway.setPolicy(other.id, { trustedServers: ['files'] });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  describe('400 MCP_MALFORMED_RPC', () => {
    it('answers a body that is not JSON, audited under the key’s tenant', async () => {
      const answer = await withoutForward(async () => {
        const response = await fetch(`${gateway.url}${INSPECT}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.key}` },
          body: '{"agent_id": "a", ',
        });
        return {
          status: response.status,
          body: (await response.json()) as Record<string, unknown>,
        };
      });
      const row = await expectDeny(gateway, answer, {
        status: 400,
        reasonCode: 'MCP_MALFORMED_RPC',
        tenantId: tenant.id,
        rpcId: null,
      });
      expect(answer.body.executionMode).toBeNull();
      expect(row.resourceId).toBe('unknown');
    });

    it.each([
      ['a JSON array', () => [1, 2, 3], null],
      ['missing agent_id', () => ({ ...production(), agent_id: undefined }), 1],
      ['missing execution_id', () => ({ ...production(), execution_id: undefined }), 1],
      ['missing request', () => ({ ...production(), request: undefined }), null],
      ['an unknown execution_mode', () => production({ mode: 'dry-run' }), 1],
      [
        'a request that is not JSON-RPC 2.0',
        () => ({
          ...production(),
          request: { ...(production().request as object), jsonrpc: '1.0' },
        }),
        1,
      ],
      [
        'a request without an id',
        () => ({ ...production(), request: { ...(production().request as object), id: null } }),
        null,
      ],
      [
        'tool_name differing from params.name',
        () => ({ ...production(), tool_name: 'read_rows' }),
        1,
      ],
      ['params nested deeper than 64', () => production({ args: nested(70) }), 1],
      [
        'an unknown member in request',
        () => ({ ...production(), request: { ...(production().request as object), extra: 1 } }),
        1,
      ],
    ])('answers %s', async (_name, body, rpcId) => {
      const answer = await withoutForward(() => gateway.inspect(body()));
      await expectDeny(gateway, answer, {
        status: 400,
        reasonCode: 'MCP_MALFORMED_RPC',
        tenantId: tenant.id,
        rpcId,
      });
    });
  });

  describe('400 MCP_TOKEN_PASSTHROUGH', () => {
    it.each(['MCP-Authorization', 'X-Upstream-Authorization', 'X-MCP-Authorization'])(
      'refuses a token in the %s header',
      async (header) => {
        const answer = await withoutForward(() =>
          gateway.inspect(production(), { headers: { [header]: 'Bearer upstream-token-123' } }),
        );
        await expectDeny(gateway, answer, {
          status: 400,
          reasonCode: 'MCP_TOKEN_PASSTHROUGH',
          tenantId: tenant.id,
        });
      },
    );

    it.each([
      ['an auth-like key', { access_token: 'tok-9f8e7d6c5b4a' }],
      ['a Bearer value', { 'x-forward': 'Bearer tok-9f8e7d6c5b4a' }],
    ])('refuses %s in request.params._meta', async (_name, meta) => {
      const body = production();
      (body.request as { params: Record<string, unknown> }).params._meta = meta;
      const answer = await withoutForward(() => gateway.inspect(body));
      const row = await expectDeny(gateway, answer, {
        status: 400,
        reasonCode: 'MCP_TOKEN_PASSTHROUGH',
        tenantId: tenant.id,
      });
      // The audit names where the token was, never the token.
      expect(JSON.stringify(row.metadata)).not.toContain('tok-9f8e7d6c5b4a');
      expect(JSON.stringify(answer.body)).not.toContain('tok-9f8e7d6c5b4a');
    });
  });

  describe('403 agent and mode', () => {
    it('AGENT_UNKNOWN: an agent id the tenant does not have', async () => {
      const answer = await withoutForward(() =>
        gateway.inspect(inspectBody('no-such-agent', { mode: 'production' })),
      );
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'AGENT_UNKNOWN',
        tenantId: tenant.id,
      });
    });

    it('AGENT_UNKNOWN: another tenant’s key used with this tenant’s agent', async () => {
      const ownAudit = await countAuditEntries(gateway.db, tenant.id);
      const answer = await withoutForward(() => gateway.inspect(production(), { key: other.key }));
      // Audited in the chain of the key's tenant, not in the agent's.
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'AGENT_UNKNOWN',
        tenantId: other.id,
      });
      expect(await countAuditEntries(gateway.db, tenant.id)).toBe(ownAudit);
    });

    it('AGENT_REVOKED: a killed agent', async () => {
      const agentId = await gateway.addAgent(tenant.id);
      const before = await gateway.inspect(
        inspectBody(agentId, { mode: 'simulation', tool: 'echo' }),
      );
      expect(before.status).toBe(200);
      await killAgent(gateway, tenant.id, agentId);
      const answer = await withoutForward(() =>
        gateway.inspect(inspectBody(agentId, { mode: 'production' })),
      );
      // An authentication refusal: audited through the bounded refusal path, not as a deny
      // (docs/security.md, "Refusal auditing"); the first of the minute is an entry of its own.
      expect({ status: answer.status, reasonCode: answer.body.reasonCode }).toEqual({
        status: 403,
        reasonCode: 'AGENT_REVOKED',
      });
      expect(await findAuditEntry(gateway.db, answer.body.auditId)).toMatchObject({
        tenantId: tenant.id,
        action: 'auth.refused',
        metadata: { reasonCode: 'AGENT_REVOKED', subject: agentId },
      });
    });

    it('EXECUTION_MODE_NOT_ALLOWED: a mode the tenant does not allow', async () => {
      const restricted = await gateway.addTenant();
      await gateway.setPolicy(restricted.id, {
        trustedServers: ['files'],
        allowedModes: ['simulation'],
      });
      await gateway.registerServer({
        tenantId: restricted.id,
        serverId: 'files',
        url: upstream.url,
      });
      const answer = await withoutForward(() =>
        gateway.inspect(inspectBody(restricted.agentId, { mode: 'production' }), {
          key: restricted.key,
        }),
      );
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'EXECUTION_MODE_NOT_ALLOWED',
        tenantId: restricted.id,
      });
    });
  });

  describe('403 gateway policy', () => {
    it('MCP_SERVER_NOT_WHITELISTED', async () => {
      const answer = await withoutForward(() =>
        gateway.inspect(production({ server: 'elsewhere' })),
      );
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'MCP_SERVER_NOT_WHITELISTED',
        tenantId: tenant.id,
      });
    });

    it.each([
      ['an exact blocked method', 'prompts/get', 'anything'],
      ['a method matching a * glob', 'resources/read', 'anything'],
      ['an exact blocked tool', 'tools/call', 'forbidden'],
      ['a tool matching a * glob', 'tools/call', 'danger_zone'],
    ])('MCP_METHOD_BLOCKED: %s', async (_name, method, tool) => {
      const body = production({ tool });
      (body.request as { method: string }).method = method;
      const answer = await withoutForward(() => gateway.inspect(body));
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'MCP_METHOD_BLOCKED',
        tenantId: tenant.id,
      });
    });

    it('AGENT_TOOL_NOT_ALLOWED: a tool outside the agent’s allowedTools', async () => {
      const agentId = await gateway.addAgent(tenant.id, { allowedTools: ['echo'] });
      const answer = await withoutForward(() =>
        gateway.inspect(
          inspectBody(agentId, { mode: 'production', tool: 'read_rows', args: { table: 't' } }),
        ),
      );
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'AGENT_TOOL_NOT_ALLOWED',
        tenantId: tenant.id,
      });
    });

    it('MCP_DESTRUCTIVE_OP_BLOCKED, naming the signal', async () => {
      const answer = await withoutForward(() =>
        gateway.inspect(production({ tool: 'drop_table', args: { table: 'users' } })),
      );
      const row = await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'MCP_DESTRUCTIVE_OP_BLOCKED',
        tenantId: tenant.id,
      });
      expect(answer.body.signal).toEqual({ kind: 'tool-name', detail: 'matches "drop"' });
      expect(row.metadata.signal).toEqual(answer.body.signal);
    });

    it('MCP_DATA_EXFILTRATION_SUSPECTED, naming the signal', async () => {
      const answer = await withoutForward(() =>
        gateway.inspect(production({ args: { text: 'post it to https://evil.example.io/x' } })),
      );
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'MCP_DATA_EXFILTRATION_SUSPECTED',
        tenantId: tenant.id,
      });
      expect(answer.body.signal).toMatchObject({ kind: 'destination' });
    });
  });

  describe('NPL', () => {
    it('403 NPL_POLICY_BLOCK names the rule, the policy and the severity', async () => {
      const answer = await withoutForward(() =>
        gateway.inspect(production({ args: { text: 'npl-block' } })),
      );
      const row = await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'NPL_POLICY_BLOCK',
        tenantId: tenant.id,
      });
      expect(answer.body).toMatchObject({
        ruleId: 'block_forbidden_text',
        policy: policyUri,
        alertSeverity: 'CRITICAL',
      });
      expect(row.metadata).toMatchObject({
        ruleId: 'block_forbidden_text',
        policy: policyUri,
        alertSeverity: 'CRITICAL',
      });
    });

    it('403 NPL_REGISTRY_FAIL_CLOSED: the request names a pin that is not published', async () => {
      const answer = await withoutForward(() =>
        gateway.inspect(production({ policy: 'svc://never-published@1.0.0' })),
      );
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'NPL_REGISTRY_FAIL_CLOSED',
        tenantId: tenant.id,
      });
      expect(answer.body).toMatchObject({
        ruleId: 'NPL_REGISTRY_FAIL_CLOSED',
        alertSeverity: 'CRITICAL',
      });
    });

    it('403 NPL_REGISTRY_FAIL_CLOSED: the tenant pins a policy that is not published', async () => {
      const pinned = await gateway.addTenant();
      await gateway.registerServer({ tenantId: pinned.id, serverId: 'files', url: upstream.url });
      await gateway.setPolicy(pinned.id, {
        trustedServers: ['files'],
        pinnedPolicies: ['svc://missing-policy@2.0.0'],
      });
      const answer = await withoutForward(() =>
        gateway.inspect(inspectBody(pinned.agentId, { mode: 'production' }), { key: pinned.key }),
      );
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: 'NPL_REGISTRY_FAIL_CLOSED',
        tenantId: pinned.id,
      });
      expect(answer.body.policy).toBe('svc://missing-policy@2.0.0');
    });

    it('202 NPL_REQUIRE_HUMAN holds the call, stores the approval and audits the request', async () => {
      const { status, body } = await withoutForward(() =>
        gateway.inspect(production({ args: { text: 'needs-human' } })),
      );
      expect(status).toBe(202);
      expect(body).toMatchObject({
        decision: 'require_human_approval',
        reasonCode: 'NPL_REQUIRE_HUMAN',
        executionMode: 'production',
        enforced: true,
        ruleId: 'hold_for_human',
        policy: policyUri,
        alertSeverity: 'MEDIUM',
        approval: { status: 'pending' },
      });
      expect(body.response).toBeUndefined();
      const approval = body.approval as { id: string };
      const row = await findAuditEntry(gateway.db, body.auditId);
      expect(row).toMatchObject({
        tenantId: tenant.id,
        action: 'approval.requested',
        resourceId: approval.id,
      });
    });
  });

  describe('200 allow', () => {
    it('forwards the call once and returns the SDK server’s JSON-RPC response', async () => {
      const before = upstream.calls.get('echo') ?? 0;
      const { status, body } = await gateway.inspect(production({ id: 'req-7' }));
      expect(status).toBe(200);
      expect(body).toMatchObject({
        decision: 'allow',
        reasonCode: null,
        executionMode: 'production',
        enforced: true,
      });
      expect(body.simulated).toBeUndefined();
      expect(body.response).toEqual({
        jsonrpc: '2.0',
        id: 'req-7',
        result: {
          content: [{ type: 'text', text: '{"text":"hello"}' }],
          structuredContent: { text: 'hello' },
        },
      });
      expect(upstream.calls.get('echo')).toBe(before + 1);
    });
  });

  describe('forward failure rows (decision allow, nothing audited as a deny)', () => {
    it('404 MCP_SERVER_NOT_REGISTERED: whitelisted but not registered', async () => {
      const { status, body } = await withoutForward(() =>
        gateway.inspect(production({ server: 'ghost' })),
      );
      expect(status).toBe(404);
      expect(body).toMatchObject({
        decision: 'allow',
        reasonCode: 'MCP_SERVER_NOT_REGISTERED',
        response: {
          jsonrpc: '2.0',
          id: 1,
          error: { data: { reasonCode: 'MCP_SERVER_NOT_REGISTERED' } },
        },
      });
    });

    it('502 MCP_UPSTREAM_ERROR: the registered server refuses connections', async () => {
      const { status, body } = await gateway.inspect(production({ server: 'down' }));
      expect(status).toBe(502);
      expect(body).toMatchObject({
        decision: 'allow',
        reasonCode: 'MCP_UPSTREAM_ERROR',
        response: { jsonrpc: '2.0', id: 1, error: { data: { reasonCode: 'MCP_UPSTREAM_ERROR' } } },
      });
    });

    it('504 MCP_UPSTREAM_TIMEOUT: the tool answers after the read timeout', async () => {
      // Open the session first, so the timeout is the call's and not the initialize's.
      expect((await gateway.inspect(production())).status).toBe(200);
      const { status, body } = await gateway.inspect(
        production({ tool: 'slow', args: { ms: 6_000 } }),
      );
      expect(status).toBe(504);
      expect(body).toMatchObject({
        decision: 'allow',
        reasonCode: 'MCP_UPSTREAM_TIMEOUT',
        response: {
          jsonrpc: '2.0',
          id: 1,
          error: { data: { reasonCode: 'MCP_UPSTREAM_TIMEOUT' } },
        },
      });
      expect(upstream.calls.get('slow')).toBe(1);
    });

    it('200 under oauthMode mcp_as: the forward carries a gateway-minted bearer token', async () => {
      // (tests/data-plane/oauth/forwarding.test.ts verifies the token itself.)
      const oauth = await gateway.addTenant();
      await gateway.registerServer({ tenantId: oauth.id, serverId: 'files', url: upstream.url });
      await gateway.setPolicy(oauth.id, { trustedServers: ['files'], oauthMode: 'mcp_as' });
      const { status, body } = await gateway.inspect(
        inspectBody(oauth.agentId, { mode: 'production' }),
        { key: oauth.key },
      );
      expect(status).toBe(200);
      expect(body).toMatchObject({ decision: 'allow' });
      expect(upstream.lastAuthorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    });
  });

  describe('authentication (no audit entry for an unauthenticated request)', () => {
    const fakeSecret = () => randomBytes(32).toString('base64url');

    async function expectUnauthenticated(
      headers: Record<string, string>,
      code = 'AUTH_INVALID_API_KEY',
      status = 401,
      message: unknown = expect.any(String),
    ) {
      const audit = await countAuditEntries(gateway.db);
      const answer = await withoutForward(() => post(headers));
      expect(answer.status).toBe(status);
      expect(answer.body).toEqual({
        error: code,
        reasonCode: code,
        message,
        hint: expect.any(String),
        docs: 'docs/inspect.md#request',
        ...(code === 'AUTH_INSUFFICIENT_SCOPE' ? { requiredScope: 'agents:execute' } : {}),
      });
      // A key lacking the scope is known, and so is its tenant: its refusal is audited
      // (auth.refused, bounded; docs/audit.md, "Refusals"). An unknown key has no trail.
      expect(await countAuditEntries(gateway.db)).toBe(audit + (status === 403 ? 1 : 0));
    }

    it('401 without an Authorization header, saying so', async () => {
      await expectUnauthenticated(
        {},
        'AUTH_INVALID_API_KEY',
        401,
        'no API key: the request has no Authorization header',
      );
    });

    it('401 with another scheme', async () => {
      await expectUnauthenticated({ authorization: `Basic ${tenant.key}` });
      await expectUnauthenticated({ authorization: tenant.key });
    });

    it('401 with a malformed key', async () => {
      await expectUnauthenticated({ authorization: 'Bearer not-a-key' });
      await expectUnauthenticated({ authorization: `Bearer ${tenant.key}x` });
      await expectUnauthenticated({ authorization: 'Bearer ' });
    });

    it('401 with an unknown prefix', async () => {
      await expectUnauthenticated({ authorization: `Bearer agk_zzzzzzzzzzzz_${fakeSecret()}` });
    });

    it('401 with the right prefix and a wrong secret', async () => {
      const prefix = tenant.key.split('_')[1];
      await expectUnauthenticated(
        { authorization: `Bearer agk_${prefix}_${fakeSecret()}` },
        'AUTH_INVALID_API_KEY',
        401,
        'invalid API key',
      );
    });

    it('401 with a revoked key', async () => {
      const created = await createApiKey(gateway.db, {
        tenantId: tenant.id,
        name: 'to revoke',
        scopes: ['agents:execute'],
      });
      await gateway.sync();
      expect((await post({ authorization: `Bearer ${created.key}` })).status).toBe(200);
      expect(await revokeApiKey(gateway.db, tenant.id, created.id)).toBe(true);
      await gateway.sync();
      await expectUnauthenticated({ authorization: `Bearer ${created.key}` });
    });

    it('401 with an expired key (expired before publication, and after)', async () => {
      const stale = await createApiKey(gateway.db, {
        tenantId: tenant.id,
        name: 'stale',
        scopes: ['agents:execute'],
        expiresAt: new Date(Date.now() - 1_000),
      });
      const expiresAt = Date.now() + 2_500;
      const expiring = await createApiKey(gateway.db, {
        tenantId: tenant.id,
        name: 'expiring',
        scopes: ['agents:execute'],
        expiresAt: new Date(expiresAt),
      });
      await gateway.sync();
      await expectUnauthenticated({ authorization: `Bearer ${stale.key}` });
      const simulation = inspectBody(tenant.agentId);
      expect((await post({ authorization: `Bearer ${expiring.key}` }, simulation)).status).toBe(
        200,
      );
      // The data plane checks expiry per request: no new snapshot is needed for it to bite.
      await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 200));
      await expectUnauthenticated({ authorization: `Bearer ${expiring.key}` });
    });

    it('403 AUTH_INSUFFICIENT_SCOPE for a key with only agents:manage', async () => {
      const key = await gateway.addApiKey(tenant.id, ['agents:manage']);
      await expectUnauthenticated(
        { authorization: `Bearer ${key}` },
        'AUTH_INSUFFICIENT_SCOPE',
        403,
      );
    });
  });
});
