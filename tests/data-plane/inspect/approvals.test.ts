// Held calls end to end (DESIGN.md §4): an NPL REQUIRE_HUMAN rule holds the call (202, stored,
// audited); the operator's decision is the storage-level one an operator API calls; the agent's
// resubmission with `approval_id` passes exactly once, only approved, unexpired, for the same agent
// and the same call. Every refusal is an audited deny that forwards nothing. The long-poll sees a
// decision made outside this process (no in-process notification) within its poll interval.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveApproval } from '../../../control-plane/services/approvals.js';
import { EVENT_TYPES } from '../../../shared/events/index.js';
import type { ApprovalId } from '../../../shared/ids.js';
import { decideApproval, findApproval } from '../../../storage/tables/approvals.js';
import { describeEachDatabase } from '../../support/databases.js';
import {
  inspectBody,
  startTestGateway,
  type TestGateway,
  type TestTenant,
} from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { scrapeMetrics, total } from '../../support/metrics.js';
import { expectDeny, findAuditEntry, getApproval } from './support.js';

const HOLD_POLICY = {
  version: '1.0.0',
  policyName: 'hold-payments',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'hold_payments',
      action: 'REQUIRE_HUMAN',
      condition: "tool.name == 'echo' && args.text.startsWith('pay')",
      alertSeverity: 'MEDIUM',
    },
  ],
};

describeEachDatabase('approvals over HTTP', (kind) => {
  let gateway: TestGateway;
  let upstream: McpUpstream;
  let tenant: TestTenant;
  let policyUri: string;

  const call = (
    args: Record<string, unknown>,
    extra: { approvalId?: string; agentId?: string } = {},
  ) =>
    inspectBody(extra.agentId ?? tenant.agentId, {
      mode: 'production',
      args,
      ...(extra.approvalId === undefined ? {} : { approvalId: extra.approvalId }),
    });

  const echoCalls = () => upstream.calls.get('echo') ?? 0;

  async function hold(args: Record<string, unknown>, agentId?: string): Promise<ApprovalId> {
    const { status, body } = await gateway.inspect(call(args, { agentId }));
    expect(status).toBe(202);
    return (body.approval as { id: ApprovalId }).id;
  }

  const decide = (id: ApprovalId, decision: 'approved' | 'rejected', reason?: string) =>
    decideApproval(gateway.db, {
      tenantId: tenant.id,
      id,
      decision,
      decidedBy: 'operator@test',
      reason: reason ?? null,
    });

  /** An operator's decision as the control plane makes it: stored, audited, published. */
  const resolve = (id: string, decision: 'approved' | 'rejected') =>
    resolveApproval(
      gateway.db,
      gateway.runtime.audit,
      { tenantId: tenant.id, id, decision, decidedBy: 'operator@test' },
      gateway.runtime.events,
    );

  /** Resolves once a long-poll is subscribed to the event bus. */
  /**
   * Resolves once a long-poll on approval `id` waits: subscribed to its decision and recorded as
   * waiting (it announces `approval.waiting` while pending). Call it before the poll starts.
   */
  const pollWaiting = (id: ApprovalId): Promise<unknown> => {
    const waiting = gateway.runtime.events.subscribe(
      (event) =>
        event.type === EVENT_TYPES.APPROVAL_WAITING &&
        event.approval.id === id &&
        event.approval.status === 'pending',
    );
    return waiting.next().finally(() => waiting.return?.());
  };

  /** Resubmits and asserts an audited deny that reached nothing upstream. */
  async function expectRefused(
    body: Record<string, unknown>,
    status: number,
    reasonCode: string,
  ): Promise<void> {
    const requests = upstream.requests;
    const answer = await gateway.inspect(body);
    await expectDeny(gateway, answer, { status, reasonCode, tenantId: tenant.id });
    expect(upstream.requests).toBe(requests);
  }

  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
    gateway = await startTestGateway(kind);
    tenant = gateway.tenant;
    policyUri = await gateway.publishPolicy(tenant.id, HOLD_POLICY);
    await gateway.registerServer({ tenantId: tenant.id, serverId: 'files', url: upstream.url });
    await gateway.setPolicy(tenant.id, { trustedServers: ['files'], pinnedPolicies: [policyUri] });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('holds the call: 202 with the approval, stored pending, audited, nothing forwarded', async () => {
    const requests = upstream.requests;
    const started = Date.now();
    const { status, body } = await gateway.inspect(call({ text: 'pay 100', to: 'acme' }));
    expect(status).toBe(202);
    expect(body).toMatchObject({
      decision: 'require_human_approval',
      reasonCode: 'NPL_REQUIRE_HUMAN',
      executionMode: 'production',
      enforced: true,
      ruleId: 'hold_payments',
      policy: policyUri,
      alertSeverity: 'MEDIUM',
      approval: { id: expect.any(String), status: 'pending', expiresAt: expect.any(String) },
    });
    const approval = body.approval as { id: ApprovalId; expiresAt: string };
    // The tenant's default approval TTL is 900 s.
    const ttl = Date.parse(approval.expiresAt) - started;
    expect(ttl).toBeGreaterThan(895_000);
    expect(ttl).toBeLessThan(905_000);
    expect(upstream.requests).toBe(requests);
    expect(await findAuditEntry(gateway.db, body.auditId)).toMatchObject({
      tenantId: tenant.id,
      action: 'approval.requested',
      resourceType: 'approval',
      resourceId: approval.id,
      metadata: {
        decision: 'require_human_approval',
        reasonCode: 'NPL_REQUIRE_HUMAN',
        ruleId: 'hold_payments',
        policy: policyUri,
        tool: 'echo',
      },
    });
    expect(await findApproval(gateway.db, tenant.id, approval.id)).toMatchObject({
      status: 'pending',
      agentId: tenant.agentId,
      serverId: 'files',
      toolName: 'echo',
      arguments: { text: 'pay 100', to: 'acme' },
    });
  });

  it('refuses a resubmission before the decision: 403 APPROVAL_PENDING', async () => {
    const id = await hold({ text: 'pay 1' });
    await expectRefused(call({ text: 'pay 1' }, { approvalId: id }), 403, 'APPROVAL_PENDING');
  });

  it('approved: the resubmission passes once, is forwarded once; a replay is APPROVAL_ALREADY_USED', async () => {
    const id = await hold({ text: 'pay 2' });
    expect((await decide(id, 'approved')).ok).toBe(true);
    const before = echoCalls();
    const { status, body } = await gateway.inspect(call({ text: 'pay 2' }, { approvalId: id }));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      decision: 'allow',
      reasonCode: null,
      executionMode: 'production',
      ruleId: 'hold_payments',
      response: { jsonrpc: '2.0', id: 1, result: { structuredContent: { text: 'pay 2' } } },
    });
    expect(echoCalls()).toBe(before + 1);
    const used = await gateway.db.query<{ action: string }>(
      `select action from audit_entries where "resourceId" = $1 order by seq`,
      [id],
    );
    expect(used.map((row) => row.action)).toEqual(['approval.requested', 'approval.used']);
    await expectRefused(call({ text: 'pay 2' }, { approvalId: id }), 403, 'APPROVAL_ALREADY_USED');
    expect(echoCalls()).toBe(before + 1);
    expect((await getApproval(gateway, id)).body.status).toBe('used');
  });

  it('lets only one of two concurrent resubmissions through', async () => {
    const id = await hold({ text: 'pay 3' });
    await decide(id, 'approved');
    const before = echoCalls();
    const answers = await Promise.all([
      gateway.inspect(call({ text: 'pay 3' }, { approvalId: id })),
      gateway.inspect(call({ text: 'pay 3' }, { approvalId: id })),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 403]);
    expect(answers.map((answer) => answer.body.reasonCode).sort()).toEqual([
      'APPROVAL_ALREADY_USED',
      null,
    ]);
    expect(echoCalls()).toBe(before + 1);
  });

  it('rejected: APPROVAL_REJECTED', async () => {
    const id = await hold({ text: 'pay 4' });
    expect((await decide(id, 'rejected', 'not this week')).ok).toBe(true);
    await expectRefused(call({ text: 'pay 4' }, { approvalId: id }), 403, 'APPROVAL_REJECTED');
    expect((await getApproval(gateway, id)).body).toMatchObject({
      status: 'rejected',
      decisionReason: 'not this week',
    });
  });

  it('changed arguments: APPROVAL_MISMATCH, and the approval stays usable for the approved call', async () => {
    const id = await hold({ text: 'pay 5', to: 'acme' });
    await decide(id, 'approved');
    await expectRefused(
      call({ text: 'pay 5000', to: 'acme' }, { approvalId: id }),
      403,
      'APPROVAL_MISMATCH',
    );
    await expectRefused(
      call({ text: 'pay 5', to: 'acme', extra: true }, { approvalId: id }),
      403,
      'APPROVAL_MISMATCH',
    );
    // Key order is not part of the call's identity.
    const { status } = await gateway.inspect(
      call({ to: 'acme', text: 'pay 5' }, { approvalId: id }),
    );
    expect(status).toBe(200);
  });

  it('another agent of the tenant using the id: 404 APPROVAL_NOT_FOUND', async () => {
    const id = await hold({ text: 'pay 6' });
    await decide(id, 'approved');
    const intruder = await gateway.addAgent(tenant.id);
    await expectRefused(
      call({ text: 'pay 6' }, { approvalId: id, agentId: intruder }),
      404,
      'APPROVAL_NOT_FOUND',
    );
    // The owner can still use it.
    expect((await gateway.inspect(call({ text: 'pay 6' }, { approvalId: id }))).status).toBe(200);
  });

  it('an unknown approval id: 404 APPROVAL_NOT_FOUND', async () => {
    await expectRefused(
      call({ text: 'pay 7' }, { approvalId: '00000000-0000-4000-8000-000000000000' }),
      404,
      'APPROVAL_NOT_FOUND',
    );
  });

  it('expired (pending or approved): APPROVAL_EXPIRED', async () => {
    const pending = await hold({ text: 'pay 8' });
    const approved = await hold({ text: 'pay 9' });
    await decide(approved, 'approved');
    await gateway.db.query(
      `update approvals set "expiresAt" = now() - interval '1 second' where id = any($1)`,
      [[pending, approved]],
    );
    await expectRefused(call({ text: 'pay 8' }, { approvalId: pending }), 403, 'APPROVAL_EXPIRED');
    await expectRefused(call({ text: 'pay 9' }, { approvalId: approved }), 403, 'APPROVAL_EXPIRED');
    expect((await getApproval(gateway, pending)).body.status).toBe('expired');
    // An operator can no longer decide it either.
    expect(await decide(pending, 'approved')).toMatchObject({ ok: false, reason: 'not_pending' });
  });

  describe('GET /api/v1/mcp/gateway/approvals/:id', () => {
    it('long-polls until an operator decides, woken by the approval.resolved event', async () => {
      const id = await hold({ text: 'pay 10' });
      const before = await scrapeMetrics(gateway.url);
      const started = Date.now();
      const waiting = pollWaiting(id);
      const poll = getApproval(gateway, id, { wait: 30 });
      await waiting;
      await resolve(id, 'approved');
      const { status, body } = await poll;
      const resolvedAt = Date.now();
      expect(status).toBe(200);
      expect(body).toMatchObject({
        id,
        status: 'approved',
        agentId: tenant.agentId,
        serverId: 'files',
        toolName: 'echo',
        decidedAt: expect.any(String),
      });
      // Woken by the event (it answers `approved`, so after the decision), well before the
      // 30 s wait is over.
      expect(resolvedAt - started).toBeLessThan(15_000);
      // The wait is counted apart from decisions (agent_gateway_approval_wait_seconds).
      const waits = 'agent_gateway_approval_wait_seconds_count';
      const labels = { source: 'long_poll', outcome: 'approved' };
      const after = await scrapeMetrics(gateway.url);
      expect(total(after, waits, labels) - total(before, waits, labels)).toBe(1);
    }, 60_000);

    it('wakes when the rejection is published on the event bus', async () => {
      const id = await hold({ text: 'pay 11' });
      const waiting = pollWaiting(id);
      const poll = getApproval(gateway, id, { wait: 5 });
      await waiting;
      await resolve(id, 'rejected');
      expect((await poll).body.status).toBe('rejected');
    });

    it('?wait=0 answers at once with the current state', async () => {
      const id = await hold({ text: 'pay 12' });
      const started = Date.now();
      const { status, body } = await getApproval(gateway, id, { wait: 0 });
      expect(status).toBe(200);
      expect(body.status).toBe('pending');
      // Not a long-poll: one would hold a pending approval for the longest wait (30 s).
      expect(Date.now() - started).toBeLessThan(15_000);
    });

    it('404 APPROVAL_NOT_FOUND for an unknown id', async () => {
      const { status, body } = await getApproval(gateway, 'no-such-approval', { wait: 1 });
      expect(status).toBe(404);
      expect(body).toEqual({
        error: 'APPROVAL_NOT_FOUND',
        reasonCode: 'APPROVAL_NOT_FOUND',
        message: expect.any(String),
        hint: expect.any(String),
        docs: 'docs/inspect.md#approvals',
      });
    });

    it('404 APPROVAL_NOT_FOUND with another tenant’s key', async () => {
      const id = await hold({ text: 'pay 13' });
      const other = await gateway.addTenant();
      const { status, body } = await getApproval(gateway, id, { key: other.key });
      expect(status).toBe(404);
      expect(body.reasonCode).toBe('APPROVAL_NOT_FOUND');
      expect(JSON.stringify(body)).not.toContain('pay 13');
      expect((await getApproval(gateway, id)).status).toBe(200);
    });

    it('401 without a valid key', async () => {
      const id = await hold({ text: 'pay 14' });
      const { status, body } = await getApproval(gateway, id, { key: 'agk_nope' });
      expect(status).toBe(401);
      expect(body.reasonCode).toBe('AUTH_INVALID_API_KEY');
    });
  });
});
