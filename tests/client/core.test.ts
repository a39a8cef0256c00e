// The core client against a real gateway over loopback HTTP: every decision and every error
// type, approvals (approve, reject, expiry, the client's own timeout, abort), the kill switch's
// latch, retries only on 429/503, the identity read and its refresh, and the Agent-Proof a
// tenant requiring agent identity accepts.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentRevoked,
  ApprovalExpired,
  ApprovalRejected,
  ApprovalTimeout,
  createGatewayClient,
  type GatewayClient,
  type GatewayClientConfig,
  GatewayDenied,
  GatewayRequestError,
  GatewayUnavailable,
} from '../../client/src/index.js';
import { ERROR_CODES } from '../../shared/errors/index.js';
import { EVENT_TYPES } from '../../shared/events/index.js';
import { asApprovalId, asTenantId } from '../../shared/ids.js';
import { graphql } from '../control-plane/graphql/support.js';
import {
  type ClientTestGateway,
  type CountingProxy,
  clientConfigFor,
  SIM_MOCK,
  type SpawnedAgent,
  startClientGateway,
  startCountingProxy,
} from './core-support.js';

describe('the core client against a gateway', () => {
  let t: ClientTestGateway;
  let agent: SpawnedAgent;
  let proxy: CountingProxy;

  const configFor = (who: SpawnedAgent, extra: Partial<GatewayClientConfig> = {}) =>
    clientConfigFor(t, who, extra);
  const client = (extra: Partial<GatewayClientConfig> = {}) =>
    createGatewayClient(configFor(agent, extra));

  /** A tool that counts its runs. */
  function echoTool(c: GatewayClient) {
    const runs: Record<string, unknown>[] = [];
    const tool = c.governTool<{ text: string }, string>({ name: 'echo' }, (args, context) => {
      runs.push({ args, decision: context.inspection.decision });
      return `echo: ${args.text}`;
    });
    return { tool, runs };
  }

  /** The approval id of the call held most recently for this agent. */
  async function heldApprovalId(agentId: string): Promise<string> {
    const row = await t.gateway.db.prisma.approval.findFirst({
      where: { agentId, status: 'pending' },
      orderBy: { createdAt: 'desc' },
    });
    return row!.id;
  }

  beforeAll(async () => {
    t = await startClientGateway();
    agent = await t.spawnAgent();
    proxy = await startCountingProxy(t.gateway.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await t?.close();
  });

  it('allow: the tool runs once with the arguments, the gateway forwarded nothing', async () => {
    const c = client();
    const { tool, runs } = echoTool(c);
    expect(await tool({ text: 'hello' })).toBe('echo: hello');
    expect(runs).toEqual([{ args: { text: 'hello' }, decision: 'allow' }]);
    const outcome = await c.inspect({ toolName: 'echo', arguments: { text: 'hi' } });
    expect(outcome).toMatchObject({
      decision: 'allow',
      reasonCode: null,
      inspectionId: expect.any(String),
      policy: t.policyUri,
      ruleId: 'npl_default_allow',
    });
    expect(outcome.raw.forwarded).toBe(false);
    expect(outcome.result).toBeUndefined();
  });

  it('simulation: the mock is returned and the tool does not run', async () => {
    const c = client({ executionMode: 'simulation', servers: { echo: 'sim' } });
    const { tool, runs } = echoTool(c);
    expect(await tool({ text: 'hello' })).toEqual(SIM_MOCK);
    expect(runs).toEqual([]);
  });

  it('deny: GatewayDenied with reasonCode, ruleId, policy and auditId; the tool does not run', async () => {
    const { tool, runs } = echoTool(client());
    const error = await tool({ text: 'secret' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayDenied);
    expect(error).toMatchObject({
      code: 'GATEWAY_DENIED',
      reasonCode: 'NPL_POLICY_BLOCK',
      ruleId: 'block_secrets',
      policy: t.policyUri,
      auditId: expect.any(String),
      inspectionId: expect.any(String),
    });
    const audit = await t.gateway.db.prisma.auditEntry.findUnique({
      where: { id: (error as GatewayDenied).auditId! },
    });
    expect(audit?.action).toBe('inspect.deny');
    expect(runs).toEqual([]);
  });

  it('shadow: a call policy would block runs, the counterfactual in the inspection', async () => {
    const c = client({ executionMode: 'shadow' });
    const seen: Record<string, unknown>[] = [];
    const tool = c.governTool<{ text: string }, string>({ name: 'echo' }, (args, context) => {
      seen.push(context.inspection.raw);
      return `echo: ${args.text}`;
    });
    expect(await tool({ text: 'secret' })).toBe('echo: secret');
    expect(seen).toEqual([
      expect.objectContaining({
        decision: 'allow',
        enforced: false,
        forwarded: false,
        shadow: expect.objectContaining({ decision: 'deny', reasonCode: 'NPL_POLICY_BLOCK' }),
      }),
    ]);
  });

  it('a tool the agent may not use is denied as such', async () => {
    const c = client();
    const tool = c.governTool({ name: 'delete_everything' }, () => 'ran');
    await expect(tool({})).rejects.toMatchObject({ reasonCode: 'AGENT_TOOL_NOT_ALLOWED' });
  });

  it('hold → approved over GraphQL → the tool runs once, the approval resubmitted', async () => {
    const { tool, runs } = echoTool(client());
    const running = tool({ text: 'pay 100' });
    await t.pollsWaiting();
    const approvalId = await heldApprovalId(agent.id);
    await t.approve(approvalId);
    expect(await running).toBe('echo: pay 100');
    expect(runs).toEqual([{ args: { text: 'pay 100' }, decision: 'allow' }]);
    const row = await t.gateway.db.prisma.approval.findUnique({ where: { id: approvalId } });
    expect(row?.status).toBe('used');
  });

  it('hold → rejected: ApprovalRejected with the reason, the tool does not run', async () => {
    const { tool, runs } = echoTool(client());
    const running = tool({ text: 'pay 200' }).catch((e: unknown) => e);
    await t.pollsWaiting();
    const approvalId = await heldApprovalId(agent.id);
    await t.reject(approvalId, 'not this month');
    const error = await running;
    expect(error).toBeInstanceOf(ApprovalRejected);
    expect(error).toMatchObject({ approvalId, reason: 'not this month' });
    expect(runs).toEqual([]);
  });

  it('hold → expired on the gateway: ApprovalExpired', async () => {
    const { tool, runs } = echoTool(client());
    const running = tool({ text: 'pay 300' }).catch((e: unknown) => e);
    await t.pollsWaiting();
    const approvalId = await heldApprovalId(agent.id);
    // Its time is up; the event wakes the long-poll, which reads it as expired.
    await t.gateway.db.prisma.approval.update({
      where: { id: approvalId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    t.gateway.runtime.events.publish({
      type: EVENT_TYPES.APPROVAL_RESOLVED,
      tenantId: asTenantId(t.gateway.tenant.id),
      approval: { id: asApprovalId(approvalId), agentId: agent.id as never, status: 'expired' },
    } as never);
    const error = await running;
    expect(error).toBeInstanceOf(ApprovalExpired);
    expect(error).toMatchObject({ approvalId, code: 'APPROVAL_EXPIRED' });
    expect(runs).toEqual([]);
  });

  it('hold → nobody decides within approvalTimeoutMs: ApprovalTimeout', async () => {
    const { tool, runs } = echoTool(client({ approvalTimeoutMs: 300 }));
    const error = await tool({ text: 'pay 400' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApprovalTimeout);
    expect(error).toMatchObject({ code: 'APPROVAL_TIMEOUT', approvalId: expect.any(String) });
    expect(runs).toEqual([]);
  });

  it('hold → the caller aborts while waiting: an AbortError, the tool does not run', async () => {
    const { tool, runs } = echoTool(client());
    const controller = new AbortController();
    const running = tool({ text: 'pay 500' }, { signal: controller.signal }).catch(
      (e: unknown) => e,
    );
    await t.pollsWaiting();
    controller.abort();
    const error = await running;
    expect((error as Error).name).toBe('AbortError');
    expect(runs).toEqual([]);
  });

  it('an unknown approval id: GatewayRequestError 404 APPROVAL_NOT_FOUND, with the hint and docs page of the answer', async () => {
    await expect(client().waitForApproval('no-such-approval')).rejects.toMatchObject({
      status: 404,
      reasonCode: 'APPROVAL_NOT_FOUND',
      hint: ERROR_CODES.APPROVAL_NOT_FOUND.hint,
      docs: 'docs/inspect.md#approvals',
      issues: [],
    });
  });

  it('killed agent: AgentRevoked, and every later call fails without a request', async () => {
    const victim = await t.spawnAgent();
    const c = createGatewayClient(configFor(victim, { baseUrl: proxy.url }));
    const { tool, runs } = echoTool(c);
    expect(await tool({ text: 'before' })).toBe('echo: before');
    await t.kill(victim.publicKey);
    const error = await tool({ text: 'after' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentRevoked);
    expect(error).toMatchObject({ code: 'AGENT_REVOKED', agentId: victim.id });
    expect(c.revoked).toBe(true);
    const requests = proxy.requests;
    await expect(tool({ text: 'again' })).rejects.toBeInstanceOf(AgentRevoked);
    await expect(c.inspect({ toolName: 'echo', arguments: {} })).rejects.toBeInstanceOf(
      AgentRevoked,
    );
    await expect(c.identity()).rejects.toBeInstanceOf(AgentRevoked);
    await expect(c.waitForApproval('x')).rejects.toBeInstanceOf(AgentRevoked);
    expect(proxy.requests).toBe(requests);
    expect(runs).toEqual([{ args: { text: 'before' }, decision: 'allow' }]);
  });

  it('503 and 429 are retried (Retry-After honoured) until the gateway answers', async () => {
    const c = client({ baseUrl: proxy.url });
    const { tool, runs } = echoTool(c);
    const before = proxy.requests;
    proxy.script(
      { status: 503, headers: { 'retry-after': '0' } },
      { status: 429, headers: { 'retry-after': '0' } },
    );
    expect(await tool({ text: 'busy' })).toBe('echo: busy');
    expect(proxy.requests - before).toBe(3);
    expect(runs).toHaveLength(1);
  });

  it('a gateway that stays unavailable: GatewayUnavailable after retries + 1 attempts', async () => {
    const c = client({ baseUrl: proxy.url, retries: 2 });
    const before = proxy.requests;
    proxy.script(
      { status: 503, headers: { 'retry-after': '0' } },
      { status: 503, headers: { 'retry-after': '0' } },
      { status: 503, headers: { 'retry-after': '0' } },
    );
    const error = await c.inspect({ toolName: 'echo', arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayUnavailable);
    expect(error).toMatchObject({ status: 503, attempts: 3 });
    expect(proxy.requests - before).toBe(3);
  });

  it('nothing listening: GatewayUnavailable status 0 after one attempt', async () => {
    const c = client({ baseUrl: 'http://127.0.0.1:9' });
    await expect(c.inspect({ toolName: 'echo', arguments: {} })).rejects.toMatchObject({
      code: 'GATEWAY_UNAVAILABLE',
      status: 0,
      attempts: 1,
    });
  });

  it('a gateway that does not answer within timeoutMs: GatewayUnavailable status 0', async () => {
    const silent = createServer(() => {
      // Never answers.
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as { port: number };
      const c = client({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 150 });
      await expect(c.inspect({ toolName: 'echo', arguments: {} })).rejects.toMatchObject({
        code: 'GATEWAY_UNAVAILABLE',
        status: 0,
        attempts: 1,
      });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('400 and 403 are not retried', async () => {
    const before = proxy.requests;
    // A deny the gateway answers 400 is an outcome: one request.
    proxy.script({
      status: 400,
      body: { decision: 'deny', reasonCode: 'MCP_MALFORMED_RPC', inspectionId: 'i-1' },
    });
    const malformed = await client({ baseUrl: proxy.url }).inspect({
      toolName: 'echo',
      arguments: {},
    });
    expect(malformed).toMatchObject({ decision: 'deny', reasonCode: 'MCP_MALFORMED_RPC' });
    expect(proxy.requests - before).toBe(1);
    // A key without agents:execute: the real gateway's 403, one request.
    const managerOnly = client({ baseUrl: proxy.url, apiKey: t.gateway.managerKey });
    const error = await managerOnly
      .inspect({ toolName: 'echo', arguments: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayRequestError);
    expect(error).toMatchObject({ status: 403, reasonCode: 'AUTH_INSUFFICIENT_SCOPE' });
    expect(proxy.requests - before).toBe(2);
  });

  it('identity(): the credential and OAuth client, cached, refreshed before it expires', async () => {
    // A credential of 60 s is within the refresh margin: every read goes to the gateway.
    const shortLived = await t.spawnAgent({ ttl_seconds: 60 });
    const c = createGatewayClient(configFor(shortLived, { baseUrl: proxy.url }));
    const first = await c.identity();
    expect(first).toMatchObject({
      agentId: shortLived.id,
      publicKey: shortLived.publicKey,
      status: 'active',
      credentialId: shortLived.credentialId,
      oauthClients: [{ clientId: shortLived.clientId }],
    });
    const issued = await fetch(`${t.gateway.url}/api/v1/agentiam/credentials/issue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        agent_id: shortLived.id,
        supervising_user_id: 'ops@example.com',
        ttl_seconds: 3600,
      }),
    });
    expect(issued.status).toBe(201);
    const { credentialId } = (await issued.json()) as { credentialId: string };
    const refreshed = await c.identity();
    expect(refreshed.credentialId).toBe(credentialId);
    // Now an hour away from expiry: served from the cache.
    const before = proxy.requests;
    expect(await c.identity()).toBe(refreshed);
    expect(proxy.requests).toBe(before);
  });

  describe('a tenant requiring agent identity', () => {
    beforeAll(async () => {
      const answer = await graphql(
        t.gateway.url,
        t.adminKey,
        `mutation { updateGatewayPolicy(input: { requireAgentIdentity: true }) {
          __typename } }`,
      );
      expect(answer.errors).toBeUndefined();
      await t.gateway.sync();
    });

    it('accepts the credential and Agent-Proof the client presents with a private key', async () => {
      const c = client({ privateKeyJwk: agent.privateKeyJwk });
      const { tool, runs } = echoTool(c);
      expect(await tool({ text: 'proved' })).toBe('echo: proved');
      expect(await tool({ text: 'proved again' })).toBe('echo: proved again');
      expect(runs).toHaveLength(2);
    });

    it('behind a proxy, the proof is signed for publicUrl', async () => {
      const c = client({
        privateKeyJwk: agent.privateKeyJwk,
        baseUrl: proxy.url,
        publicUrl: t.gateway.url,
      });
      expect(await echoTool(c).tool({ text: 'via proxy' })).toBe('echo: via proxy');
    });

    it('refuses a client without a private key: GatewayDenied AGENT_IDENTITY_REQUIRED', async () => {
      const { tool, runs } = echoTool(client());
      await expect(tool({ text: 'anonymous' })).rejects.toMatchObject({
        code: 'GATEWAY_DENIED',
        reasonCode: 'AGENT_IDENTITY_REQUIRED',
      });
      expect(runs).toEqual([]);
    });

    it("refuses another agent's key: AGENT_PROOF_INVALID", async () => {
      const other = await t.spawnAgent();
      const c = client({ privateKeyJwk: other.privateKeyJwk });
      await expect(echoTool(c).tool({ text: 'impostor' })).rejects.toMatchObject({
        reasonCode: 'AGENT_PROOF_INVALID',
      });
    });
  });
});
