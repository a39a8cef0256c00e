// The delegation-links recorder behind the IdentityVerifier's onChainVerified hook: the first
// verification of a link writes its row (issuer, subject, tools, expiry) in a batch; a link is
// written once however often it is verified; of an invalid chain only the links before the
// failing hop count, and none of a chain refused for its depth; a link whose issuer was killed
// before the write is written revoked; a full queue drops links that the next verification
// records; a hook given nonsense neither throws nor writes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DelegationLinkRecorder } from '../../../data-plane/agentiam/delegation-links.js';
import { IdentityVerifier } from '../../../data-plane/agentiam/identity-verifier.js';
import { createGatewayMetrics } from '../../../data-plane/metrics/gateway-metrics.js';
import {
  addKeyedAgent,
  delegate,
  issueCredential,
  type KeyedAgent,
} from '../../support/agentiam-client.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';

describeEachDatabase('recording verified delegation links', (kind) => {
  let gateway: TestGateway;
  let tenantId: string;
  let agents: KeyedAgent[];
  let root: Record<string, unknown>;
  let links: Record<string, unknown>[];
  let widened: Record<string, unknown>;
  const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3600_000);
  const metrics = createGatewayMetrics({ defaultMetrics: false });

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    tenantId = gateway.tenant.id;
    agents = [];
    for (let i = 0; i < 5; i++) {
      agents.push(await addKeyedAgent(gateway, tenantId, { allowedTools: ['echo', 'read'] }));
    }
    const [a, b, c, d] = agents as [KeyedAgent, KeyedAgent, KeyedAgent, KeyedAgent];
    root = await issueCredential(gateway, a);
    links = [
      await delegate({ tenantId, from: a, to: b, tools: ['echo', 'read'], expiresAt }),
      await delegate({ tenantId, from: b, to: c, tools: ['echo'], expiresAt }),
      await delegate({ tenantId, from: c, to: d, tools: ['echo'], expiresAt }),
    ];
    widened = await delegate({ tenantId, from: b, to: c, tools: ['echo', 'write'], expiresAt });
  }, 60_000);
  afterAll(() => gateway?.close());

  const verify = async (
    recorder: DelegationLinkRecorder,
    chain: readonly unknown[],
    requestedTool = 'echo',
  ) => {
    const identity = new IdentityVerifier({ metrics, onChainVerified: recorder.onChainVerified });
    const snapshot = gateway.runtime.store.current!;
    const tenant = snapshot.tenants.get(tenantId)!;
    return identity.verifyChain(
      snapshot,
      tenant,
      { rootCredential: root, chain, requestedTool },
      'verify',
    );
  };
  const rows = () =>
    gateway.db.prisma.delegationLink.findMany({
      where: { tenantId },
      orderBy: { firstSeenAt: 'asc' },
    });
  const clear = () => gateway.db.prisma.delegationLink.deleteMany({ where: { tenantId } });

  it('writes each link of a valid chain once, with its issuer, subject, tools and expiry', async () => {
    await clear();
    const recorder = new DelegationLinkRecorder(gateway.db, { intervalMs: 60_000 });
    const result = await verify(recorder, links.slice(0, 2));
    expect(result.valid).toBe(true);
    // Nothing on the verification's path: written by the flush.
    expect(await rows()).toEqual([]);
    await recorder.flush();
    const [a, b, c] = agents as [KeyedAgent, KeyedAgent, KeyedAgent];
    const written = await rows();
    expect(
      written.map(({ id, issuerAgentId, subjectAgentId, tools, expiresAt: at, revokedAt }) => ({
        id,
        issuerAgentId,
        subjectAgentId,
        tools,
        expiresAt: at,
        revokedAt,
      })),
    ).toEqual(
      expect.arrayContaining([
        {
          id: links[0]!.id,
          issuerAgentId: a.id,
          subjectAgentId: b.id,
          tools: ['echo', 'read'],
          expiresAt,
          revokedAt: null,
        },
        {
          id: links[1]!.id,
          issuerAgentId: b.id,
          subjectAgentId: c.id,
          tools: ['echo'],
          expiresAt,
          revokedAt: null,
        },
      ]),
    );
    expect(written).toHaveLength(2);
    // Verified again, by this recorder or another process's: still one row each.
    await verify(recorder, links.slice(0, 2));
    await recorder.flush();
    const other = new DelegationLinkRecorder(gateway.db, { intervalMs: 60_000 });
    await verify(other, links.slice(0, 2));
    await other.stop();
    expect(await rows()).toEqual(written);
    await recorder.stop();
  });

  it('of an invalid chain, records the links before the failing hop only', async () => {
    await clear();
    const recorder = new DelegationLinkRecorder(gateway.db, { intervalMs: 60_000 });
    const result = await verify(recorder, [links[0], widened]);
    expect(result.failure).toMatchObject({ hop: 2, code: 'DELEGATION_TOOLS_WIDENED' });
    await recorder.stop();
    expect((await rows()).map((row) => row.id)).toEqual([links[0]!.id]);
  });

  it('records nothing of a chain refused for its depth', async () => {
    await clear();
    const recorder = new DelegationLinkRecorder(gateway.db, { intervalMs: 60_000 });
    const tooDeep = [links[0], links[1], links[2], links[2]];
    const result = await verify(recorder, tooDeep);
    expect(result.failure?.code).toBe('DELEGATION_DEPTH_EXCEEDED');
    await recorder.stop();
    expect(await rows()).toEqual([]);
  });

  it('writes a link revoked when its issuer was killed before the write', async () => {
    await clear();
    const recorder = new DelegationLinkRecorder(gateway.db, { intervalMs: 60_000 });
    expect((await verify(recorder, links.slice(0, 3))).valid).toBe(true);
    const killedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const c = agents[2]!;
    await gateway.db.prisma.agent.update({
      where: { id: c.id },
      data: { status: 'killed', killedAt, killedReason: 'test' },
    });
    await recorder.stop();
    const written = await rows();
    expect(written.find((row) => row.issuerAgentId === c.id)?.revokedAt).toEqual(killedAt);
    expect(written.filter((row) => row.revokedAt === null)).toHaveLength(2);
    await gateway.db.prisma.agent.update({
      where: { id: c.id },
      data: { status: 'active', killedAt: null, killedReason: null },
    });
  });

  it('drops what exceeds a full queue, and records it at its next verification', async () => {
    await clear();
    const recorder = new DelegationLinkRecorder(gateway.db, { intervalMs: 60_000, maxPending: 1 });
    await verify(recorder, links.slice(0, 2));
    await recorder.flush();
    expect((await rows()).map((row) => row.id)).toEqual([links[0]!.id]);
    await verify(recorder, links.slice(0, 2));
    await recorder.stop();
    expect((await rows()).map((row) => row.id).sort()).toEqual([links[0]!.id, links[1]!.id].sort());
  });

  it('neither throws nor writes for links it cannot read', async () => {
    await clear();
    const recorder = new DelegationLinkRecorder(gateway.db, { intervalMs: 60_000 });
    const valid = {
      valid: true,
      depth: 3,
      agentId: 'x',
      permittedTools: [],
      chain: [],
      failure: null,
    };
    expect(() =>
      recorder.onChainVerified(tenantId, [null, 'link', { credentialSubject: 5 }], valid),
    ).not.toThrow();
    await recorder.stop();
    expect(await rows()).toEqual([]);
  });
});
