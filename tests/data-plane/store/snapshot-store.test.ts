// The snapshot store's rules: versions only move forward (republishing is harmless), a snapshot
// that cannot be read leaves the last good one serving, a tenant that fails the check or does not
// compile keeps its last good state while the others advance, and compiled NPL policies are
// reused from the previous snapshot only while they are still published, unchanged.
import { describe, expect, it } from 'vitest';
import type { CompiledSnapshot } from '../../../data-plane/store/compiled-snapshot.js';
import { SnapshotStore } from '../../../data-plane/store/snapshot-store.js';
import type { ConfigSnapshot, TenantConfig } from '../../../shared/snapshot/index.js';
import {
  makePolicyVersion,
  makeSnapshot,
  makeTenant,
} from '../../shared/snapshot/snapshot-fixture.js';

const TEAM_RULES = 'svc://team-rules@1.0.0';

/** A configuration the compiler refuses: the exfiltration detector rejects a negative limit. */
function broken(tenant: TenantConfig): TenantConfig {
  return { ...tenant, gatewayPolicy: { ...tenant.gatewayPolicy, exfilBulkExportLimit: -1 } };
}

function applied(store: SnapshotStore, snapshot: ConfigSnapshot): CompiledSnapshot {
  const result = store.apply(snapshot);
  expect(result.applied).toBe(true);
  return store.current as CompiledSnapshot;
}

describe('SnapshotStore versions', () => {
  it('applies newer versions only; the same or an older one changes nothing', () => {
    const store = new SnapshotStore();
    const seen: number[] = [];
    store.onApply((snapshot) => seen.push(snapshot.version));
    const first = applied(store, makeSnapshot(2, [makeTenant('a')]));
    expect(store.apply(makeSnapshot(2, [makeTenant('a')]))).toEqual({
      applied: false,
      version: 2,
      reason: 'not newer than the current one',
    });
    expect(store.apply(makeSnapshot(1, [])).applied).toBe(false);
    expect(store.current).toBe(first);
    expect(applied(store, makeSnapshot(3, [])).version).toBe(3);
    expect(seen).toEqual([2, 3]);
  });

  it('rejects a snapshot it cannot read and keeps the last good one serving', () => {
    const store = new SnapshotStore();
    const good = applied(store, makeSnapshot(1, [makeTenant('a')]));
    const unreadable = { version: 2, builtAt: '', tenants: null } as unknown as ConfigSnapshot;
    const result = store.apply(unreadable);
    expect(result).toMatchObject({ applied: false, version: 2 });
    expect(store.current).toBe(good);
    // The version was not taken: a readable snapshot with the same number still applies.
    expect(applied(store, makeSnapshot(2, [makeTenant('a')])).version).toBe(2);
  });
});

describe('SnapshotStore per-tenant rejection', () => {
  it('keeps the last good state of a tenant that does not compile while others advance', () => {
    const store = new SnapshotStore();
    const v1 = applied(store, makeSnapshot(1, [makeTenant('a'), makeTenant('b')]));
    const a2 = makeTenant('a', { configVersion: 2 });
    const b2 = broken(makeTenant('b', { configVersion: 2 }));
    const result = store.apply(makeSnapshot(2, [a2, b2]));
    expect(result).toMatchObject({
      applied: true,
      version: 2,
      rejectedTenants: [
        {
          tenantId: 'b',
          keptConfigVersion: 1,
          reasons: ['does not compile: bulkExportLimit must be a non-negative number or null'],
        },
      ],
    });
    const v2 = store.current as CompiledSnapshot;
    expect(v2.version).toBe(2);
    expect(v2.tenants.get('a')?.configVersion).toBe(2);
    expect(v2.tenants.get('b')).toBe(v1.tenants.get('b'));
    // The kept tenant still authenticates its keys and agents.
    expect(v2.apiKeysByPrefix.get('b-prefix')?.tenant).toBe(v1.tenants.get('b'));
    expect(v2.tenants.get('b')?.agentsByPublicKey.get('b-public-key')).toBe(
      v1.tenants.get('b')?.agents.get('b-agent'),
    );
    expect(v2.apiKeysByPrefix.get('a-prefix')?.tenant).toBe(v2.tenants.get('a'));

    // Fixed in the next version: the tenant advances and nothing is rejected.
    const v3 = applied(store, makeSnapshot(3, [a2, makeTenant('b', { configVersion: 3 })]));
    expect(v3.rejectedTenants).toEqual([]);
    expect(v3.tenants.get('b')?.configVersion).toBe(3);
  });

  it('serves, and hands out for persisting, the last good configuration of a held-back tenant', () => {
    const store = new SnapshotStore();
    const b1 = makeTenant('b');
    const v1 = store.apply(makeSnapshot(1, [makeTenant('a'), b1]));
    expect(v1.applied && v1.served.tenants.map((t) => t.configVersion)).toEqual([1, 1]);
    const received = makeSnapshot(2, [
      makeTenant('a', { configVersion: 2 }),
      broken(makeTenant('b', { configVersion: 2 })),
    ]);
    const v2 = store.apply(received);
    if (!v2.applied) throw new Error('the snapshot must apply');
    expect(v2.served).not.toBe(received);
    expect(v2.served.version).toBe(2);
    expect(v2.served.tenants.find((t) => t.id === 'a')?.configVersion).toBe(2);
    expect(v2.served.tenants.find((t) => t.id === 'b')).toBe(b1);

    // A data plane restarted from what it persisted serves exactly that, every tenant included.
    const restarted = new SnapshotStore();
    const reloaded = restarted.apply(JSON.parse(JSON.stringify(v2.served)) as ConfigSnapshot);
    expect(reloaded).toMatchObject({ applied: true, version: 2, rejectedTenants: [] });
    expect(restarted.current?.tenants.get('b')?.configVersion).toBe(1);
    expect(restarted.current?.tenants.get('a')?.configVersion).toBe(2);

    // When every tenant advances, what is served is what was received.
    const all = makeSnapshot(3, [makeTenant('a', { configVersion: 3 }), makeTenant('b')]);
    const v3 = store.apply(all);
    expect(v3.applied && v3.served).toBe(all);
  });

  it('keeps a tenant rejected twice at the state it last compiled', () => {
    const store = new SnapshotStore();
    const v1 = applied(store, makeSnapshot(1, [makeTenant('a')]));
    applied(store, makeSnapshot(2, [broken(makeTenant('a', { configVersion: 2 }))]));
    const v3 = applied(store, makeSnapshot(3, [broken(makeTenant('a', { configVersion: 3 }))]));
    expect(v3.tenants.get('a')).toBe(v1.tenants.get('a'));
    expect(v3.rejectedTenants).toEqual([
      expect.objectContaining({ tenantId: 'a', keptConfigVersion: 1 }),
    ]);
  });

  it('leaves out a rejected tenant that has no last good state, keys and agents included', () => {
    const store = new SnapshotStore();
    const v1 = applied(store, makeSnapshot(1, [makeTenant('a'), broken(makeTenant('new'))]));
    expect(v1.rejectedTenants).toEqual([
      expect.objectContaining({ tenantId: 'new', keptConfigVersion: null }),
    ]);
    expect([...v1.tenants.keys()]).toEqual(['a']);
    expect(v1.apiKeysByPrefix.has('new-prefix')).toBe(false);
    expect([...v1.tenants.values()].some((t) => t.agentsByPublicKey.has('new-public-key'))).toBe(
      false,
    );
  });

  it('drops a tenant that left the snapshot, even one that was being kept', () => {
    const store = new SnapshotStore();
    applied(store, makeSnapshot(1, [makeTenant('a'), makeTenant('b')]));
    applied(store, makeSnapshot(2, [makeTenant('a'), broken(makeTenant('b'))]));
    const v3 = applied(store, makeSnapshot(3, [makeTenant('a')]));
    expect([...v3.tenants.keys()]).toEqual(['a']);
    expect(v3.apiKeysByPrefix.has('b-prefix')).toBe(false);
  });

  it('rejects every tenant claiming the same API key prefix; the others advance', () => {
    const store = new SnapshotStore();
    const v1 = applied(store, makeSnapshot(1, [makeTenant('a'), makeTenant('b')]));
    const intruder = makeTenant('c', {
      apiKeys: [{ ...makeTenant('a').apiKeys[0]!, id: 'c-key', secretHash: 'c' }],
    });
    const v2 = applied(
      store,
      makeSnapshot(2, [
        makeTenant('a', { configVersion: 2 }),
        makeTenant('b', { configVersion: 2 }),
        intruder,
      ]),
    );
    expect(v2.rejectedTenants.map((r) => [r.tenantId, r.keptConfigVersion, r.reasons])).toEqual([
      ['a', 1, ['API key prefix a-prefix is claimed 2 times (tenants a, c)']],
      ['c', null, ['API key prefix a-prefix is claimed 2 times (tenants a, c)']],
    ]);
    expect(v2.tenants.get('a')).toBe(v1.tenants.get('a'));
    expect(v2.tenants.get('b')?.configVersion).toBe(2);
    expect(v2.tenants.has('c')).toBe(false);
    expect(v2.apiKeysByPrefix.get('a-prefix')?.tenant).toBe(v1.tenants.get('a'));
  });

  it("gives an advanced tenant's key precedence over a kept tenant's older claim", () => {
    const store = new SnapshotStore();
    applied(store, makeSnapshot(1, [makeTenant('a'), makeTenant('b')]));
    // a drops its key but does not compile, so its old state (with the key) is kept; b now holds
    // the same prefix in the checked snapshot.
    const a2 = broken(makeTenant('a', { apiKeys: [] }));
    const b2 = makeTenant('b', {
      apiKeys: [{ ...makeTenant('a').apiKeys[0]!, id: 'b-key-2', secretHash: 'b2' }],
    });
    const v2 = applied(store, makeSnapshot(2, [a2, b2]));
    expect(v2.apiKeysByPrefix.get('a-prefix')?.id).toBe('b-key-2');
    expect(v2.apiKeysByPrefix.get('a-prefix')?.tenant).toBe(v2.tenants.get('b'));
  });

  it('serves dangling pins and trusted servers (fail closed) instead of rejecting the tenant', () => {
    const store = new SnapshotStore();
    const v1 = applied(
      store,
      makeSnapshot(1, [
        makeTenant('a', {
          gatewayPolicy: { pinnedPolicies: [TEAM_RULES], trustedServers: ['files', 'ghost'] },
        }),
      ]),
    );
    expect(v1.rejectedTenants).toEqual([]);
    const tenant = v1.tenants.get('a');
    expect(tenant?.pinnedPolicies.map((p) => [p.uri, p.policy])).toEqual([[TEAM_RULES, null]]);
    expect(tenant?.policy.trustedServers.has('ghost')).toBe(true);
    expect(tenant?.servers.has('ghost')).toBe(false);
  });
});

describe('SnapshotStore compiled-policy reuse', () => {
  const withRules = (version: number, blockedTool?: string) =>
    makeSnapshot(version, [
      makeTenant('a', {
        configVersion: version,
        policies:
          blockedTool === undefined ? [] : [makePolicyVersion('team-rules', '1.0.0', blockedTool)],
        gatewayPolicy: { pinnedPolicies: blockedTool === undefined ? [] : [TEAM_RULES] },
      }),
    ]);
  const rulesOf = (snapshot: CompiledSnapshot) =>
    snapshot.tenants.get('a')?.policiesByUri.get(TEAM_RULES);

  it('reuses the compiled policy while its content is unchanged, and drops it once it is gone', () => {
    const store = new SnapshotStore();
    const first = rulesOf(applied(store, withRules(1, 'rm')));
    expect(first?.policy).not.toBeNull();
    const v2 = applied(store, withRules(2, 'rm'));
    expect(rulesOf(v2)).toBe(first);
    expect(v2.tenants.get('a')?.pinnedPolicies[0]).toBe(first);

    const changed = rulesOf(applied(store, withRules(3, 'mv')));
    expect(changed).not.toBe(first);
    expect(changed?.policy?.description).toBe('blocks mv');

    const v4 = applied(store, withRules(4));
    expect(rulesOf(v4)).toBeUndefined();
    expect(v4.tenants.get('a')?.policiesByContent.size).toBe(0);
    // Published again with the same content: compiled afresh, nothing kept it meanwhile.
    const again = rulesOf(applied(store, withRules(5, 'mv')));
    expect(again).not.toBe(changed);
    expect(again?.policy?.description).toBe('blocks mv');
  });

  it('does not share compiled policies between stores', () => {
    const one = new SnapshotStore();
    const two = new SnapshotStore();
    expect(rulesOf(applied(one, withRules(1, 'rm')))).not.toBe(
      rulesOf(applied(two, withRules(1, 'rm'))),
    );
  });
});
