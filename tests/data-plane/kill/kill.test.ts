// The kill switch end to end on one process (`agent-gateway start`'s shape), on both databases:
// the answer and what it counts, then what the killed agent meets everywhere — inspect, the token
// endpoint, introspection, its credential (as the gateway serves the status list and as an
// independent verifier reads it), a delegation chain through it, its held approval's long-poll,
// and the call it had in flight at a real MCP SDK upstream (which sees the connection closed).
// Then idempotency: a second kill answers the original, two at once answer one kill, a kill whose
// receiver died after the commit is completed by the next request — agent.killed audited once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeStatusList, isBitSet } from '../../../shared/agentiam/status-list.js';
import type { AgentId } from '../../../shared/ids.js';
import { commitKill } from '../../../storage/tables/agent-kills.js';
import { verifyAsThirdParty } from '../../support/agentiam.js';
import { verifyChainOverHttp } from '../../support/agentiam-client.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody } from '../../support/gateway.js';
import { until } from '../../support/until.js';
import {
  introspect,
  type KillScene,
  postKill,
  startKillScene,
  tokenFor,
  type Victim,
} from './kill-fixture.js';

describeEachDatabase('kill switch', (kind) => {
  let scene: KillScene;
  beforeAll(async () => {
    scene = await startKillScene(kind);
  });
  afterAll(async () => {
    await scene?.close();
  });

  describe('a kill and what the agent meets after it', () => {
    let victim: Victim;
    let answer: { status: number; body: Record<string, unknown> };
    let inFlight: Promise<{ status: number; body: Record<string, unknown> }>;
    let longPoll: Promise<{ status: number; body: Record<string, unknown> }>;
    let approvalId: string;

    beforeAll(async () => {
      const { gateway, upstream } = scene;
      victim = await scene.addVictim();
      // Everything works before the kill.
      expect((await gateway.inspect(inspectBody(victim.id, { tool: 'echo' }))).status).toBe(200);
      expect((await verifyChainOverHttp(gateway, victim.chain)).body.valid).toBe(true);
      // Its own client sees its token active (another client would see it inactive, RFC 7662).
      expect((await introspect(gateway, victim.client, victim.token)).body.active).toBe(true);
      // A held call and its long-poll.
      const held = await gateway.inspect(inspectBody(victim.id, { tool: 'write' }));
      expect(held.status).toBe(202);
      approvalId = (held.body.approval as { id: string }).id;
      longPoll = fetch(`${gateway.url}/api/v1/mcp/gateway/approvals/${approvalId}?wait=60`, {
        headers: { authorization: `Bearer ${scene.executeKey}` },
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as Record<string, unknown>,
      }));
      // A call in flight: the upstream's `block` tool answers only when cancelled.
      inFlight = gateway.inspect(inspectBody(victim.id, { tool: 'block', mode: 'production' }));
      await upstream.waitForCalls('block', 1);
      // Both are the agent's executions in flight: the forward and the held call's wait.
      await until(
        async () => gateway.runtime.executions.inFlight(victim.id as AgentId),
        (count) => count === 2,
        'the forward and the long-poll in flight',
      );
      answer = await postKill(
        gateway,
        victim.key.publicKeyMultibase,
        { reason: 'incident 42' },
        scene.killKey,
      );
    });

    it('answers 200 with what it revoked, rejected and aborted, confirmed by the one data plane', async () => {
      expect(answer.status).toBe(200);
      const kill = await scene.gateway.db.prisma.agentKill.findUniqueOrThrow({
        where: { agentId: victim.id },
      });
      expect(answer.body).toEqual({
        agentId: victim.id,
        publicKey: victim.key.publicKeyMultibase,
        killId: kill.id,
        killedAt: kill.killedAt.toISOString(),
        reason: 'incident 42',
        revoked: { credentials: 1, delegations: 1, oauthClients: 1, tokens: 1 },
        rejectedApprovals: 1,
        // The forward and the held call's long-poll it ended.
        abortedExecutions: 2,
        auditId: kill.auditId,
        propagation: {
          dataPlanes: 1,
          confirmed: 1,
          slowestMs: expect.any(Number),
          confirmedBy: ['local'],
          controlPlaneReached: true,
        },
      });
      expect(kill.answer).toEqual(answer.body);
      expect(kill.completedAt).not.toBeNull();
      const agent = await scene.gateway.db.prisma.agent.findUniqueOrThrow({
        where: { id: victim.id },
      });
      expect(agent).toMatchObject({ status: 'killed', killedReason: 'incident 42' });
    });

    it('ended the call in flight with MCP_UPSTREAM_ABORTED, and the upstream saw its connection closed', async () => {
      const ended = await inFlight;
      expect(ended.status).toBe(409);
      expect(ended.body).toMatchObject({ reasonCode: 'MCP_UPSTREAM_ABORTED' });
      expect(String(ended.body.message)).toContain('killed');
      await scene.upstream.waitForClosedByClient(1);
    });

    it('ended the held call’s long-poll with 403 AGENT_REVOKED; the approval is rejected by the kill switch', async () => {
      const ended = await longPoll;
      expect(ended.status).toBe(403);
      expect(ended.body).toMatchObject({ reasonCode: 'AGENT_REVOKED' });
      // A later read (with or without a wait) answers the same, audited as a bounded refusal.
      const again = await fetch(
        `${scene.gateway.url}/api/v1/mcp/gateway/approvals/${approvalId}?wait=5`,
        { headers: { authorization: `Bearer ${scene.executeKey}` } },
      );
      expect(again.status).toBe(403);
      expect(((await again.json()) as { reasonCode: string }).reasonCode).toBe('AGENT_REVOKED');
      const refusals = await scene.gateway.db.prisma.auditEntry.count({
        where: { action: 'auth.refused', resourceId: victim.id },
      });
      expect(refusals).toBeGreaterThanOrEqual(1);
      const row = await scene.gateway.db.prisma.approval.findUniqueOrThrow({
        where: { id: approvalId },
      });
      expect(row).toMatchObject({ decidedBy: 'kill switch', decisionReason: 'incident 42' });
    });

    it('inspect answers 403 AGENT_REVOKED', async () => {
      const refused = await scene.gateway.inspect(inspectBody(victim.id, { tool: 'echo' }));
      expect(refused.status).toBe(403);
      expect(refused.body.reasonCode).toBe('AGENT_REVOKED');
    });

    it('the token endpoint answers invalid_client for its client; its token introspects inactive', async () => {
      const refused = await tokenFor(scene.gateway, victim.client);
      expect(refused.status).toBe(401);
      expect(refused.body.error).toBe('invalid_client');
      const introspected = await introspect(scene.gateway, victim.observer, victim.token);
      expect(introspected.status).toBe(200);
      expect(introspected.body).toEqual({ active: false });
    });

    it('its credential is revoked: in the status list served, and for an independent verifier', async () => {
      const status = victim.credential.credentialStatus as {
        statusListCredential: string;
        statusListIndex: string;
      };
      const served = await fetch(status.statusListCredential);
      expect(served.status).toBe(200);
      const list = (await served.json()) as { credentialSubject: { encodedList: string } };
      const bits = decodeStatusList(list.credentialSubject.encodedList);
      expect(isBitSet(bits, Number(status.statusListIndex))).toBe(true);
      const verification = await verifyAsThirdParty(scene.gateway.url, victim.credential);
      expect(verification.result.verified).toBe(true);
      expect(verification.revoked).toBe(true);
    });

    it('a delegation chain through it fails at its hop', async () => {
      const verified = await verifyChainOverHttp(scene.gateway, victim.chain);
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({ valid: false, failure: { hop: 1 } });
    });

    it('a second kill answers 200 with the original kill, changes nothing, audits nothing', async () => {
      const again = await postKill(
        scene.gateway,
        victim.key.publicKeyMultibase,
        { reason: 'another reason' },
        scene.killKey,
      );
      expect(again.status).toBe(200);
      expect(again.body).toEqual(answer.body);
      await scene.gateway.runtime.audit.flush();
      const audited = await scene.gateway.db.prisma.auditEntry.findMany({
        where: { action: 'agent.killed', resourceId: victim.id },
      });
      expect(audited).toHaveLength(1);
      expect(audited[0]!.id).toBe(answer.body.auditId);
      expect(audited[0]!.metadata).toMatchObject({
        killId: answer.body.killId,
        reason: 'incident 42',
        revoked: { credentials: 1, delegations: 1, oauthClients: 1, tokens: 1 },
        rejectedApprovals: 1,
        abortedExecutions: 2,
        propagation: { confirmedBy: ['local'] },
      });
      const kills = await scene.gateway.db.prisma.agentKill.count({
        where: { agentId: victim.id },
      });
      expect(kills).toBe(1);
    });
  });

  it('two kills of one agent at once: both 200 with the same kill, one audit entry', async () => {
    const victim = await scene.addVictim();
    const [first, second] = await Promise.all([
      postKill(scene.gateway, victim.key.publicKeyMultibase, { reason: 'first' }, scene.killKey),
      postKill(scene.gateway, victim.key.publicKeyMultibase, { reason: 'second' }, scene.killKey),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual(first.body);
    await scene.gateway.runtime.audit.flush();
    const audited = await scene.gateway.db.prisma.auditEntry.count({
      where: { action: 'agent.killed', resourceId: victim.id },
    });
    expect(audited).toBe(1);
  });

  it('a kill whose receiver died after the commit is completed by the next request, audited once', async () => {
    const victim = await scene.addVictim();
    // What a receiver that died right after step 1 leaves: the commit, nothing else.
    const committed = await commitKill(scene.gateway.db, {
      tenantId: scene.tenantId,
      target: { publicKey: victim.key.publicKeyMultibase },
      reason: 'receiver died',
      killedBy: 'api_key:gone',
      receivedBy: 'dp-dead',
    });
    expect(committed?.created).toBe(true);
    const answer = await postKill(
      scene.gateway,
      victim.key.publicKeyMultibase,
      { reason: 'retry' },
      scene.killKey,
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      killId: committed?.kill.id,
      reason: 'receiver died',
      revoked: { credentials: 1, delegations: 1, oauthClients: 1, tokens: 1 },
      propagation: { confirmedBy: ['local'], controlPlaneReached: true },
    });
    expect((await scene.gateway.inspect(inspectBody(victim.id, { tool: 'echo' }))).status).toBe(
      403,
    );
    await scene.gateway.runtime.audit.flush();
    const audited = await scene.gateway.db.prisma.auditEntry.findMany({
      where: { action: 'agent.killed', resourceId: victim.id },
    });
    expect(audited).toHaveLength(1);
    expect(audited[0]!.metadata).toMatchObject({ receivedBy: 'dp-dead', reason: 'receiver died' });
  });
});
