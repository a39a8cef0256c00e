// The store's kill overlay (data-plane/store/kill-overlay.ts): a kill delta takes effect at once,
// on the snapshot serving and on an older one a request may still hold, and a full snapshot built
// before the kill — arriving after it — never un-kills the agent nor serves the older status list.
// The overlay entry goes once a snapshot shows the kill. Then the same race end to end: a real
// gateway's snapshot built before a REST kill, applied after it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfigSnapshot } from '../../../control-plane/snapshot/build-snapshot.js';
import type { CompiledSnapshot } from '../../../data-plane/store/compiled-snapshot.js';
import { SnapshotStore } from '../../../data-plane/store/snapshot-store.js';
import { tenantDid } from '../../../shared/agentiam/dids.js';
import {
  encodeStatusList,
  isBitSet,
  STATUS_LIST_SIZE,
  setBit,
} from '../../../shared/agentiam/status-list.js';
import type { AgentKillDelta } from '../../../shared/config-stream/protocol.js';
import type { StatusListConfig, TenantConfig } from '../../../shared/snapshot/index.js';
import { makeSnapshot, makeTenant } from '../../shared/snapshot/snapshot-fixture.js';
import { verifyAsThirdParty } from '../../support/agentiam.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody } from '../../support/gateway.js';
import { type KillScene, postKill, startKillScene, type Victim } from './kill-fixture.js';

const LIST_URL = 'https://gw.example/api/v1/agentiam/status-lists/list-1';

function statusList(tenantId: string, version: number, revoked: number[]): StatusListConfig {
  const bits = new Uint8Array(STATUS_LIST_SIZE / 8);
  for (const index of revoked) setBit(bits, index);
  return {
    id: 'list-1',
    version,
    credential: {
      id: LIST_URL,
      issuer: tenantDid(tenantId),
      credentialSubject: { encodedList: encodeStatusList(bits) },
      proof: { proofValue: `proof-${version}` },
    },
  };
}

function tenant(status: 'active' | 'killed', listVersion: number, revoked: number[]): TenantConfig {
  const base = makeTenant('t');
  return {
    ...base,
    agents: base.agents.map((agent) => ({ ...agent, status })),
    identity: { caKeys: [], statusLists: [statusList('t', listVersion, revoked)] },
  };
}

const delta = (overrides: Partial<AgentKillDelta> = {}): AgentKillDelta => ({
  seq: 5,
  killId: 'kill-1',
  tenantId: 't',
  agentId: 't-agent',
  publicKey: 't-public-key',
  killedAt: new Date(0).toISOString(),
  statusLists: [statusList('t', 2, [3])],
  ...overrides,
});

const agentOf = (snapshot: CompiledSnapshot | undefined) =>
  snapshot?.tenants.get('t')?.agents.get('t-agent');

describe('SnapshotStore.applyKill', () => {
  it('kills at once, on the current snapshot and on an older one still held', () => {
    const store = new SnapshotStore();
    store.apply(makeSnapshot(1, [tenant('active', 1, [])]));
    const held = store.current;
    store.apply(makeSnapshot(2, [tenant('active', 1, [])]));
    expect(agentOf(store.current)?.killed).toBe(false);
    expect(store.applyKill(delta())).toBe(true);
    expect(agentOf(store.current)?.killed).toBe(true);
    expect(agentOf(held)?.killed).toBe(true);
    const list = store.statusListById('list-1');
    expect(list?.version).toBe(2);
    expect(isBitSet(list!.bits, 3)).toBe(true);
    // The identity verifier's lookup by URL sees the newer list too.
    const fromSnapshot = store.current?.tenants.get('t')?.identity.statusLists.get(LIST_URL);
    expect(store.current?.kills.statusListByUrl(LIST_URL, fromSnapshot)?.version).toBe(2);
    // A repeated delta changes nothing.
    expect(store.applyKill(delta())).toBe(false);
  });

  it('a snapshot built before the kill, applied after it, never un-kills nor serves the old list', () => {
    const store = new SnapshotStore();
    store.apply(makeSnapshot(1, [tenant('active', 1, [])]));
    store.applyKill(delta());
    const stale = { ...makeSnapshot(2, [tenant('active', 1, [])]), killsThrough: 4 };
    expect(store.apply(stale).applied).toBe(true);
    expect(agentOf(store.current)?.killed).toBe(true);
    expect(store.statusListById('list-1')?.version).toBe(2);
    expect(store.kills.pendingAgents).toBe(1);
    // The snapshot that includes the kill settles the overlay; the agent stays killed.
    store.apply({ ...makeSnapshot(3, [tenant('killed', 2, [3])]), killsThrough: 5 });
    expect(store.kills.pendingAgents).toBe(0);
    expect(agentOf(store.current)?.killed).toBe(true);
    expect(store.statusListById('list-1')?.version).toBe(2);
  });

  it('drops the entry when a snapshot says it includes the kill (killsThrough ≥ seq)', () => {
    const store = new SnapshotStore();
    store.apply(makeSnapshot(1, [tenant('active', 1, [])]));
    store.applyKill(delta({ statusLists: [] }));
    store.apply({ ...makeSnapshot(2, [tenant('active', 1, [])]), killsThrough: 5 });
    expect(store.kills.pendingAgents).toBe(0);
  });

  it('a delta before the first snapshot applies when the snapshot arrives', () => {
    const store = new SnapshotStore();
    expect(store.applyKill(delta())).toBe(true);
    store.apply(makeSnapshot(1, [tenant('active', 1, [])]));
    expect(agentOf(store.current)?.killed).toBe(true);
    expect(store.statusListById('list-1')?.version).toBe(2);
  });

  it("ignores a status list that is not the tenant's own; an older list never replaces a newer", () => {
    const store = new SnapshotStore();
    store.apply(makeSnapshot(1, [tenant('active', 3, [])]));
    const foreign = statusList('other', 9, [3]);
    store.applyKill(delta({ statusLists: [foreign, statusList('t', 2, [3])] }));
    expect(store.statusListById('list-1')?.version).toBe(3);
    expect(isBitSet(store.statusListById('list-1')!.bits, 3)).toBe(false);
    expect(agentOf(store.current)?.killed).toBe(true);
  });
});

describeEachDatabase('kill vs. a snapshot built before it', (kind) => {
  let scene: KillScene;
  let victim: Victim;
  beforeAll(async () => {
    scene = await startKillScene(kind);
    victim = await scene.addVictim();
  });
  afterAll(async () => {
    await scene?.close();
  });

  it('the older snapshot, applied after the kill, does not revive the agent or its credential', async () => {
    const { gateway } = scene;
    const before = await buildConfigSnapshot(gateway.db, 1);
    const answer = await postKill(
      gateway,
      victim.key.publicKeyMultibase,
      { reason: 'race' },
      scene.killKey,
    );
    expect(answer.status).toBe(200);
    const store = gateway.runtime.store;
    const applied = store.apply({ ...before, version: (store.current?.version ?? 0) + 1 });
    expect(applied.applied).toBe(true);
    const refused = await gateway.inspect(inspectBody(victim.id, { tool: 'echo' }));
    expect(refused.status).toBe(403);
    expect(refused.body.reasonCode).toBe('AGENT_REVOKED');
    const verification = await verifyAsThirdParty(gateway.url, victim.credential);
    expect(verification.revoked).toBe(true);
  });
});
