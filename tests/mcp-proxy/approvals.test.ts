// Approvals that wait (issue 14 item 5): a tools/call an NPL rule holds stays open on the client's
// stream; the client is told which approval holds it; an approver subscribed to approvalQueue
// approves it over GraphQL and the same call returns the upstream's result (one upstream call).
// Rejected and expired end in the audited deny, a kill in AGENT_REVOKED; a wait that ends first
// answers APPROVAL_PENDING with the approvalId, and retrying the same call resumes that approval.
// While it waits, its Approval's clientWaitingUntil says until when (the console's card shows it).
// A client that declared URL-mode elicitation (2025-11-25) is also sent the approval's console
// page as an elicitation/create in mode url, completed once the approval is decided.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../shared/events/index.js';
import type { AgentId } from '../../shared/ids.js';
import { graphql } from '../control-plane/graphql/support.js';
import { findAuditEntry } from '../data-plane/inspect/support.js';
import { type Approver, startApprover } from '../support/approver.js';
import { scrapeMetrics, total } from '../support/metrics.js';
import { until as waitFor } from '../support/until.js';
import { connectWithApiKey, type ProxyFixture, startHoldingProxyFixture } from './support.js';

/** Resolves with the id of the next approval created for the agent (subscribed at once). */
function approvalCreated(gateway: ProxyFixture['gateway'], agentId: AgentId): Promise<string> {
  const events = gateway.runtime.events.subscribe(
    (event) => event.type === EVENT_TYPES.APPROVAL_CREATED && event.approval.agentId === agentId,
  );
  return events.next().then((next) => {
    events.return?.();
    return (next.value as { approval: { id: string } }).approval.id;
  });
}

describe('MCP proxy: held calls wait for their approval', () => {
  let fixture: ProxyFixture;
  let admin: string;
  const approvers: Approver[] = [];

  beforeAll(async () => {
    ({ fixture, admin } = await startHoldingProxyFixture('pglite'));
  });
  afterAll(async () => {
    for (const started of approvers) await started.dispose();
    await fixture.close();
  });

  async function approver(agentId: AgentId, decision: 'approve' | 'reject') {
    const started = await startApprover(fixture.gateway, admin, agentId, decision);
    approvers.push(started);
    return started;
  }

  it('approved over GraphQL: the same call returns the upstream result, forwarded once', async () => {
    const { gateway, upstream, proxyUrl } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const { decided } = await approver(agentId, 'approve');
    const client = await connectWithApiKey(proxyUrl, gateway.tenant.key, agentId);
    const progress: string[] = [];
    const before = upstream.calls.get('echo') ?? 0;
    try {
      const result = await client.callTool(
        { name: 'echo', arguments: { text: 'needs-human' } },
        undefined,
        {
          onprogress: (update) => progress.push(update.message ?? ''),
        },
      );
      const approvalId = await decided;
      expect(result.structuredContent).toEqual({ text: 'needs-human' });
      expect(upstream.calls.get('echo')).toBe(before + 1);
      expect(progress[0]).toContain(`held for approval ${approvalId}`);
      expect(progress[0]).toContain('approveApproval');
      expect(progress.at(-1)).toContain(`approval ${approvalId} is approved`);
    } finally {
      await client.close();
    }
  });

  it('a client with URL elicitation is sent the approval page; deciding there completes the call', async () => {
    const { gateway, upstream, proxyUrl } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const client = new Client(
      { name: 'url-elicitation-client', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } } },
    );
    const elicited: Record<string, unknown>[] = [];
    const completed = new Promise<string>((resolve) => {
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) =>
        resolve(notification.params.elicitationId),
      );
    });
    // The user opens the page and an operator approves there (here: the same mutation).
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params);
      const params = request.params as { elicitationId: string };
      const answer = await graphql<{ approveApproval: { status: string } }>(
        gateway.url,
        admin,
        `mutation($id: ID!) { approveApproval(id: $id, reason: "opened the page") { status } }`,
        { id: params.elicitationId },
      );
      expect(answer.errors).toBeUndefined();
      return { action: 'accept' };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(proxyUrl), {
        requestInit: {
          headers: { authorization: `Bearer ${gateway.tenant.key}`, 'x-agent-id': agentId },
        },
      }),
    );
    const before = upstream.calls.get('echo') ?? 0;
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'needs-human' } });
      expect(result.structuredContent).toEqual({ text: 'needs-human' });
      expect(upstream.calls.get('echo')).toBe(before + 1);
      const approvalId = (elicited[0] as { elicitationId: string }).elicitationId;
      expect(elicited).toEqual([
        {
          mode: 'url',
          elicitationId: approvalId,
          message: expect.stringContaining(`held for approval ${approvalId}`),
          url: `${gateway.url}/console/approvals/${approvalId}`,
        },
      ]);
      expect(await completed).toBe(approvalId);
    } finally {
      await client.close();
    }
  });

  // Also the metrics of issue 25 item 5: the wait goes to its own histogram, and the allow that
  // follows the approval is timed from the end of the wait, so a human's minutes never read as the
  // gateway's latency. Both bounds hold whatever the machine's speed: the allow's clock starts
  // after the approval was sent and stops before the result arrived; the wait started before the
  // test saw it recorded and ended after the approval was sent.
  it('while the call is held, its Approval says until when the client waits; then that none does; the wait is not allow latency', async () => {
    const { gateway, proxyUrl } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const created = approvalCreated(gateway, agentId);
    const client = await connectWithApiKey(proxyUrl, gateway.tenant.key, agentId);
    const before = await scrapeMetrics(gateway.url);
    try {
      const held = Date.now();
      const result = client.callTool({ name: 'echo', arguments: { text: 'needs-human' } });
      const id = await created;
      const waitingUntil = async () =>
        (
          await graphql<{ approval: { clientWaitingUntil: string | null } }>(
            gateway.url,
            admin,
            'query($id: ID!) { approval(id: $id) { clientWaitingUntil } }',
            { id },
          )
        ).data?.approval.clientWaitingUntil ?? null;
      // The tenant's approvalWaitSeconds (120) from when the proxy started waiting.
      const until = await waitFor(waitingUntil, (value) => value !== null, 'the wait recorded');
      const waitSeen = performance.now();
      expect(Date.parse(until as string) - held).toBeGreaterThan(100_000);
      expect(Date.parse(until as string)).toBeLessThanOrEqual(Date.now() + 120_000);
      const approving = performance.now();
      await graphql(gateway.url, admin, 'mutation($id: ID!) { approveApproval(id: $id) { id } }', {
        id,
      });
      expect((await result).structuredContent).toEqual({ text: 'needs-human' });
      const answered = performance.now();
      expect(await waitingUntil()).toBeNull();

      const after = await scrapeMetrics(gateway.url);
      const delta = (name: string, labels: Record<string, string>) =>
        total(after, name, labels) - total(before, name, labels);
      const wait = { source: 'mcp_proxy', outcome: 'approved' };
      expect(delta('agent_gateway_approval_wait_seconds_count', wait)).toBe(1);
      expect(delta('agent_gateway_approval_wait_seconds_sum', wait)).toBeGreaterThanOrEqual(
        (approving - waitSeen) / 1000,
      );
      const allow = { decision: 'allow', mode: 'production' };
      expect(delta('agent_gateway_inspect_duration_seconds_count', allow)).toBe(1);
      expect(delta('agent_gateway_inspect_duration_seconds_sum', allow)).toBeLessThanOrEqual(
        (answered - approving) / 1000,
      );
    } finally {
      await client.close();
    }
  });

  it('rejected: the call ends with APPROVAL_REJECTED, audited, never forwarded', async () => {
    const { gateway, upstream, proxyUrl } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const { decided } = await approver(agentId, 'reject');
    const client = await connectWithApiKey(proxyUrl, gateway.tenant.key, agentId);
    const before = upstream.calls.get('echo') ?? 0;
    try {
      const error = await client
        .callTool({ name: 'echo', arguments: { text: 'needs-human' } })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      await decided;
      expect(error).toBeInstanceOf(McpError);
      const data = (error as McpError).data as Record<string, string>;
      expect(data.reasonCode).toBe('APPROVAL_REJECTED');
      expect((error as McpError).message).toContain('APPROVAL_REJECTED');
      expect(await findAuditEntry(gateway.db, data.auditId)).toMatchObject({
        action: 'inspect.deny',
      });
      expect(upstream.calls.get('echo') ?? 0).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('a wait that ends first answers APPROVAL_PENDING; the retry resumes the same approval', async () => {
    const { gateway, upstream, proxyUrl, serverId } = fixture;
    await gateway.setPolicy(gateway.tenant.id, { approvalWaitSeconds: 0 });
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const client = await connectWithApiKey(proxyUrl, gateway.tenant.key, agentId);
    const before = upstream.calls.get('echo') ?? 0;
    try {
      const call = () =>
        client.callTool({ name: 'echo', arguments: { text: 'needs-human' } }).then(
          (result) => ({ result, error: undefined }),
          (error: McpError) => ({ result: undefined, error }),
        );
      const first = await call();
      const firstData = first.error?.data as Record<string, string>;
      expect(firstData.reasonCode).toBe('APPROVAL_PENDING');
      const second = await call();
      expect((second.error?.data as Record<string, string> | undefined)?.approvalId).toBe(
        firstData.approvalId,
      );
      const answer = await graphql<{ approveApproval: { status: string } }>(
        gateway.url,
        admin,
        'mutation($id: ID!) { approveApproval(id: $id) { status } }',
        { id: firstData.approvalId },
      );
      expect(answer.data?.approveApproval.status).toBe('APPROVED');
      const third = await call();
      expect(third.result?.structuredContent).toEqual({ text: 'needs-human' });
      expect(upstream.calls.get('echo')).toBe(before + 1);
    } finally {
      await client.close();
      await gateway.setPolicy(gateway.tenant.id, {
        approvalWaitSeconds: 120,
        trustedServers: [serverId],
      });
    }
  });

  it('expired while waiting: APPROVAL_EXPIRED, never forwarded', async () => {
    const { gateway, upstream, proxyUrl } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const created = approvalCreated(gateway, agentId);
    const client = await connectWithApiKey(proxyUrl, gateway.tenant.key, agentId);
    const before = upstream.calls.get('echo') ?? 0;
    try {
      const pending = client.callTool({ name: 'echo', arguments: { text: 'needs-human' } }).then(
        () => undefined,
        (caught: McpError) => caught,
      );
      const id = await created;
      // The approval's time runs out (moved to the past), and the waiting call is woken.
      await gateway.db.query(
        `update approvals set "expiresAt" = now() - interval '1 second' where id = $1`,
        [id],
      );
      gateway.runtime.events.publish({
        type: EVENT_TYPES.APPROVAL_RESOLVED,
        tenantId: gateway.tenant.id,
        approval: { id: id as never, agentId, status: 'expired' },
      });
      const error = await pending;
      expect((error?.data as Record<string, string> | undefined)?.reasonCode).toBe(
        'APPROVAL_EXPIRED',
      );
      expect(upstream.calls.get('echo') ?? 0).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('killed while held: the call ends with AGENT_REVOKED, never forwarded', async () => {
    const { gateway, upstream, proxyUrl } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const created = approvalCreated(gateway, agentId);
    const client = await connectWithApiKey(proxyUrl, gateway.tenant.key, agentId);
    const before = upstream.calls.get('echo') ?? 0;
    try {
      const pending = client.callTool({ name: 'echo', arguments: { text: 'needs-human' } }).then(
        () => undefined,
        (caught: McpError) => caught,
      );
      await created;
      const killed = await graphql<{ killAgent: { abortedExecutions: number } }>(
        gateway.url,
        admin,
        'mutation($id: ID!) { killAgent(agentId: $id, reason: "held") { abortedExecutions } }',
        { id: agentId },
      );
      // The held wait counts as an execution the kill aborted.
      expect(killed.data?.killAgent.abortedExecutions).toBe(1);
      const error = await pending;
      expect(error).toBeInstanceOf(McpError);
      expect((error?.data as Record<string, string> | undefined)?.reasonCode).toBe('AGENT_REVOKED');
      expect(upstream.calls.get('echo') ?? 0).toBe(before);
    } finally {
      await client.close();
    }
  });
});
