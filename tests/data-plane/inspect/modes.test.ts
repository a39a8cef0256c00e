// The three execution modes against a real MCP server built with the official SDK (Streamable
// HTTP, stateful), answering with JSON bodies and with SSE streams: production forwards and
// returns the server's JSON-RPC response (errors included) over one session per agent and server;
// simulation never contacts the server; shadow forwards and reports what it would have denied.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  quickDatabaseKind,
  totalCalls,
} from './support.js';

const MODES_POLICY = {
  version: '1.0.0',
  policyName: 'modes-rules',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'simulate_rehearsal',
      action: 'SIMULATE',
      condition: "tool.name == 'echo' && args.text == 'simulate-me'",
      alertSeverity: 'LOW',
    },
    {
      ruleId: 'hold_for_human',
      action: 'REQUIRE_HUMAN',
      condition: "tool.name == 'echo' && args.text == 'needs-human'",
      alertSeverity: 'MEDIUM',
    },
  ],
};

const ECHO_MOCK = {
  content: [{ type: 'text', text: 'mocked echo' }],
  structuredContent: { mocked: true },
};

describe.each(['json', 'sse'] as const)(
  'execution modes, SDK upstream answering %s',
  (responseMode) => {
    let gateway: TestGateway;
    let upstream: McpUpstream;
    let tenant: TestTenant;
    let policyUri: string;

    const body = (mode: string, overrides: Parameters<typeof inspectBody>[1] = {}) =>
      inspectBody(tenant.agentId, { mode, ...overrides });

    beforeAll(async () => {
      upstream = await startMcpUpstream({ responseMode, stateful: true });
      gateway = await startTestGateway(quickDatabaseKind);
      tenant = gateway.tenant;
      policyUri = await gateway.publishPolicy(tenant.id, MODES_POLICY);
      await gateway.registerServer({
        tenantId: tenant.id,
        serverId: 'files',
        url: upstream.url,
        mockResults: { echo: ECHO_MOCK },
      });
      await gateway.registerServer({
        tenantId: tenant.id,
        serverId: 'down',
        url: await closedPortUrl(),
      });
      await gateway.setPolicy(tenant.id, {
        trustedServers: ['files', 'down', 'unregistered'],
        blockedTools: ['read_rows'],
        pinnedPolicies: [policyUri],
      });
    });
    afterAll(async () => {
      await gateway?.close();
      await upstream?.close();
    });

    describe('production', () => {
      it('forwards the call and returns the SDK server’s JSON-RPC response', async () => {
        const before = upstream.calls.get('echo') ?? 0;
        const { status, body: answer } = await gateway.inspect(
          body('production', { id: 41, args: { text: 'to the server' } }),
        );
        expect(status).toBe(200);
        expect(answer).toMatchObject({
          decision: 'allow',
          reasonCode: null,
          executionMode: 'production',
          enforced: true,
        });
        expect(answer.simulated).toBeUndefined();
        expect(answer.response).toEqual({
          jsonrpc: '2.0',
          id: 41,
          result: {
            content: [{ type: 'text', text: '{"text":"to the server"}' }],
            structuredContent: { text: 'to the server' },
          },
        });
        expect(upstream.calls.get('echo')).toBe(before + 1);
      });

      it('returns the response after the server’s notifications, which are not relayed', async () => {
        const { status, body: answer } = await gateway.inspect(
          body('production', { tool: 'notify_then_echo', args: { text: 'hi', count: 3 } }),
        );
        expect(status).toBe(200);
        expect(answer.response).toMatchObject({
          jsonrpc: '2.0',
          id: 1,
          result: { structuredContent: { text: 'hi', count: 3 } },
        });
      });

      it('passes a tool error result through unchanged', async () => {
        const { status, body: answer } = await gateway.inspect(
          body('production', { tool: 'fail', args: {} }),
        );
        expect(status).toBe(200);
        expect(answer.response).toEqual({
          jsonrpc: '2.0',
          id: 1,
          result: { isError: true, content: [{ type: 'text', text: 'failure requested' }] },
        });
      });

      it('passes the server’s JSON-RPC error through unchanged', async () => {
        const request = body('production', { tool: 'none' });
        request.request = { jsonrpc: '2.0', id: 'p-1', method: 'prompts/list', params: {} };
        const { status, body: answer } = await gateway.inspect(request);
        expect(status).toBe(200);
        expect(answer).toMatchObject({ decision: 'allow', reasonCode: null });
        expect(answer.response).toMatchObject({
          jsonrpc: '2.0',
          id: 'p-1',
          error: { code: -32601, message: expect.stringContaining('not found') },
        });
      });

      it('reuses one Mcp-Session-Id per agent and server', async () => {
        const first = await gateway.addAgent(tenant.id);
        const second = await gateway.addAgent(tenant.id);
        const sessions = upstream.sessionsCreated;
        const logged = upstream.log.length;
        for (let i = 0; i < 3; i++) {
          const { status } = await gateway.inspect(
            inspectBody(first, { mode: 'production', id: i + 1 }),
          );
          expect(status).toBe(200);
        }
        expect(upstream.sessionsCreated).toBe(sessions + 1);
        const calls = upstream.log
          .slice(logged)
          .filter((entry) => entry.rpcMethod === 'tools/call');
        expect(calls).toHaveLength(3);
        expect(new Set(calls.map((entry) => entry.sessionId)).size).toBe(1);
        expect(calls[0]?.sessionId).toEqual(expect.any(String));
        // Another agent gets a session of its own.
        expect((await gateway.inspect(inspectBody(second, { mode: 'production' }))).status).toBe(
          200,
        );
        expect(upstream.sessionsCreated).toBe(sessions + 2);
      });

      it('opens a new session when the server forgot the old one', async () => {
        expect((await gateway.inspect(body('production'))).status).toBe(200);
        const sessions = upstream.sessionsCreated;
        await upstream.expireSessions();
        const { status, body: answer } = await gateway.inspect(body('production'));
        expect(status).toBe(200);
        expect(answer.response).toMatchObject({ result: { structuredContent: { text: 'hello' } } });
        expect(upstream.sessionsCreated).toBe(sessions + 1);
      });

      it('answers an NPL SIMULATE decision as a simulation, without contacting the server', async () => {
        const requests = upstream.requests;
        const { status, body: answer } = await gateway.inspect(
          body('production', { args: { text: 'simulate-me' } }),
        );
        expect(status).toBe(200);
        expect(answer).toMatchObject({
          decision: 'allow',
          reasonCode: null,
          executionMode: 'production',
          simulated: true,
          ruleId: 'simulate_rehearsal',
          policy: policyUri,
          response: { jsonrpc: '2.0', id: 1, result: ECHO_MOCK },
        });
        expect(upstream.requests).toBe(requests);
      });

      it('502 MCP_UPSTREAM_ERROR when the server is down', async () => {
        const { status, body: answer } = await gateway.inspect(
          body('production', { server: 'down' }),
        );
        expect(status).toBe(502);
        expect(answer).toMatchObject({
          decision: 'allow',
          reasonCode: 'MCP_UPSTREAM_ERROR',
          executionMode: 'production',
          response: {
            jsonrpc: '2.0',
            id: 1,
            error: { data: { reasonCode: 'MCP_UPSTREAM_ERROR' } },
          },
        });
      });
    });

    describe('simulation', () => {
      it('returns the tenant’s registered mock result without contacting the server', async () => {
        const requests = upstream.requests;
        const { status, body: answer } = await gateway.inspect(body('simulation', { id: 'sim-1' }));
        expect(status).toBe(200);
        expect(answer).toMatchObject({
          decision: 'allow',
          reasonCode: null,
          executionMode: 'simulation',
          enforced: true,
          simulated: true,
          response: { jsonrpc: '2.0', id: 'sim-1', result: ECHO_MOCK },
        });
        expect(upstream.requests).toBe(requests);
      });

      it('returns the generic simulated result for a tool without a mock', async () => {
        const requests = upstream.requests;
        const calls = totalCalls(upstream);
        for (const server of ['files', 'unregistered']) {
          const { status, body: answer } = await gateway.inspect(
            body('simulation', { server, tool: 'drop_table', args: { table: 't' } }),
          );
          // drop_table is destructive: simulation still enforces the policy.
          expect(status).toBe(403);
          expect(answer.reasonCode).toBe('MCP_DESTRUCTIVE_OP_BLOCKED');
          const slow = await gateway.inspect(
            body('simulation', { server, tool: 'slow', args: { ms: 10_000 } }),
          );
          expect(slow.status).toBe(200);
          expect(slow.body).toMatchObject({
            simulated: true,
            response: {
              jsonrpc: '2.0',
              id: 1,
              result: {
                content: [{ type: 'text', text: '[simulated] slow was not executed' }],
                isError: false,
                _meta: { simulated: true },
              },
            },
          });
        }
        expect(upstream.requests).toBe(requests);
        expect(totalCalls(upstream)).toBe(calls);
      });
    });

    describe('shadow', () => {
      it('forwards a call it would deny, reports the counterfactual and audits it', async () => {
        const before = upstream.calls.get('read_rows') ?? 0;
        const { status, body: answer } = await gateway.inspect(
          body('shadow', { tool: 'read_rows', args: { table: 'orders' } }),
        );
        expect(status).toBe(200);
        expect(answer).toMatchObject({
          decision: 'allow',
          reasonCode: null,
          executionMode: 'shadow',
          enforced: false,
          shadow: { decision: 'deny', reasonCode: 'MCP_METHOD_BLOCKED' },
          response: {
            jsonrpc: '2.0',
            id: 1,
            result: { content: [{ type: 'text', text: 'rows of orders' }] },
          },
        });
        expect(upstream.calls.get('read_rows')).toBe(before + 1);
        const shadow = answer.shadow as { auditId: string };
        expect(await findAuditEntry(gateway.db, shadow.auditId)).toMatchObject({
          tenantId: tenant.id,
          action: 'inspect.shadow_block',
          metadata: { reasonCode: 'MCP_METHOD_BLOCKED', mode: 'shadow', tool: 'read_rows' },
        });
        // The same call in production is denied and never reaches the server.
        const production = await gateway.inspect(
          body('production', { tool: 'read_rows', args: { table: 'orders' } }),
        );
        await expectDeny(gateway, production, {
          status: 403,
          reasonCode: 'MCP_METHOD_BLOCKED',
          tenantId: tenant.id,
        });
        expect(upstream.calls.get('read_rows')).toBe(before + 1);
      });

      it('forwards a call it would hold for a human, without creating an approval', async () => {
        const approvals = await gateway.db.query<{ n: number }>(
          'select count(*)::int as n from approvals',
        );
        const { status, body: answer } = await gateway.inspect(
          body('shadow', { args: { text: 'needs-human' } }),
        );
        expect(status).toBe(200);
        expect(answer).toMatchObject({
          enforced: false,
          shadow: {
            decision: 'require_human_approval',
            reasonCode: 'NPL_REQUIRE_HUMAN',
            ruleId: 'hold_for_human',
            policy: policyUri,
          },
          response: { result: { structuredContent: { text: 'needs-human' } } },
        });
        expect(
          await gateway.db.query<{ n: number }>('select count(*)::int as n from approvals'),
        ).toEqual(approvals);
      });

      it('forwards an allowed call with an allow counterfactual and no audit entry', async () => {
        const audit = await countAuditEntries(gateway.db, tenant.id);
        const { status, body: answer } = await gateway.inspect(body('shadow'));
        expect(status).toBe(200);
        expect(answer).toMatchObject({
          decision: 'allow',
          enforced: false,
          shadow: { decision: 'allow', reasonCode: null },
          response: { result: { structuredContent: { text: 'hello' } } },
        });
        expect(await countAuditEntries(gateway.db, tenant.id)).toBe(audit);
      });

      it('cannot forward to a server the tenant never registered: 404 with the counterfactual', async () => {
        const { status, body: answer } = await gateway.inspect(
          body('shadow', { server: 'nowhere' }),
        );
        expect(status).toBe(404);
        expect(answer).toMatchObject({
          decision: 'allow',
          reasonCode: 'MCP_SERVER_NOT_REGISTERED',
          message: 'server nowhere is not registered',
          enforced: false,
          shadow: { decision: 'deny', reasonCode: 'MCP_SERVER_NOT_WHITELISTED' },
        });
        const shadow = answer.shadow as { auditId: string };
        expect((await findAuditEntry(gateway.db, shadow.auditId))?.action).toBe(
          'inspect.shadow_block',
        );
        const production = await gateway.inspect(body('production', { server: 'unregistered' }));
        expect(production.status).toBe(404);
        expect(production.body.message).toBe(
          'server unregistered is whitelisted but not registered',
        );
      });

      it('still rejects a malformed request with 400, forwarding nothing', async () => {
        const requests = upstream.requests;
        const answer = await gateway.inspect({ ...body('shadow'), tool_name: 'read_rows' });
        await expectDeny(gateway, answer, {
          status: 400,
          reasonCode: 'MCP_MALFORMED_RPC',
          tenantId: tenant.id,
        });
        expect(upstream.requests).toBe(requests);
      });
    });

    it('honours a tenant that allows only simulation', async () => {
      const restricted = await gateway.addTenant();
      await gateway.registerServer({
        tenantId: restricted.id,
        serverId: 'files',
        url: upstream.url,
      });
      await gateway.setPolicy(restricted.id, {
        trustedServers: ['files'],
        allowedModes: ['simulation'],
      });
      const requests = upstream.requests;
      for (const mode of ['production', 'shadow']) {
        const answer = await gateway.inspect(inspectBody(restricted.agentId, { mode }), {
          key: restricted.key,
        });
        await expectDeny(gateway, answer, {
          status: 403,
          reasonCode: 'EXECUTION_MODE_NOT_ALLOWED',
          tenantId: restricted.id,
        });
      }
      const simulated = await gateway.inspect(inspectBody(restricted.agentId), {
        key: restricted.key,
      });
      expect(simulated.status).toBe(200);
      expect(simulated.body.simulated).toBe(true);
      expect(upstream.requests).toBe(requests);
    });

    describe('a short read timeout', () => {
      let quick: TestGateway;
      beforeAll(async () => {
        quick = await startTestGateway(quickDatabaseKind, { upstream: { readTimeoutMs: 300 } });
        await quick.registerServer({
          tenantId: quick.tenant.id,
          serverId: 'files',
          url: upstream.url,
        });
        await quick.setPolicy(quick.tenant.id, { trustedServers: ['files'] });
      });
      afterAll(async () => {
        await quick?.close();
      });

      it('504 MCP_UPSTREAM_TIMEOUT when the tool takes longer', async () => {
        // Open the session first (retrying: the machine is shared), so the call is what times out.
        let opened = false;
        for (let attempt = 0; attempt < 5 && !opened; attempt++) {
          opened =
            (await quick.inspect(inspectBody(quick.tenant.agentId, { mode: 'production' })))
              .status === 200;
        }
        expect(opened).toBe(true);
        const slowBefore = upstream.calls.get('slow') ?? 0;
        const { status, body: answer } = await quick.inspect(
          inspectBody(quick.tenant.agentId, {
            mode: 'production',
            tool: 'slow',
            args: { ms: 3_000 },
          }),
        );
        expect(status).toBe(504);
        expect(answer).toMatchObject({
          decision: 'allow',
          reasonCode: 'MCP_UPSTREAM_TIMEOUT',
          executionMode: 'production',
          response: {
            jsonrpc: '2.0',
            id: 1,
            error: { data: { reasonCode: 'MCP_UPSTREAM_TIMEOUT' } },
          },
        });
        expect(upstream.calls.get('slow')).toBe(slowBefore + 1);
      });
    });
  },
);
