// The snapshot consistency check: dangling references are reported but served (fail closed at
// request time), ids claimed twice reject every tenant involved; each problem names its tenant
// and its path from the snapshot root.
import { describe, expect, it } from 'vitest';
import { asAgentId } from '../../../shared/ids.js';
import { checkSnapshotConsistency, groupProblemsByTenant } from '../../../shared/snapshot/index.js';
import { makePolicyVersion, makeSnapshot, makeTenant } from './snapshot-fixture.js';

describe('checkSnapshotConsistency', () => {
  it('finds nothing in a consistent snapshot with bundled and published pins', () => {
    const tenant = makeTenant('a', {
      policies: [makePolicyVersion('team-rules', '1.0.0', 'rm')],
      gatewayPolicy: {
        pinnedPolicies: ['svc://team-rules@1.0.0', 'svc://nato-prou-strict-financial@1.0.0'],
      },
    });
    expect(checkSnapshotConsistency(makeSnapshot(1, [tenant, makeTenant('b')]))).toEqual([]);
  });

  it('reports a pin that resolves to no policy, also one published by another tenant', () => {
    const snapshot = makeSnapshot(1, [
      makeTenant('a', { policies: [makePolicyVersion('team-rules', '1.0.0', 'rm')] }),
      makeTenant('b', {
        gatewayPolicy: { pinnedPolicies: ['svc://team-rules@1.0.0', 'svc://team-rules@2.0.0'] },
      }),
    ]);
    expect(checkSnapshotConsistency(snapshot)).toEqual([
      {
        code: 'PIN_UNRESOLVED',
        tenantId: 'b',
        path: ['tenants', 1, 'gatewayPolicy', 'pinnedPolicies', 0],
        message: 'pinned policy svc://team-rules@1.0.0 is neither bundled nor published',
        rejectsTenant: false,
      },
      {
        code: 'PIN_UNRESOLVED',
        tenantId: 'b',
        path: ['tenants', 1, 'gatewayPolicy', 'pinnedPolicies', 1],
        message: 'pinned policy svc://team-rules@2.0.0 is neither bundled nor published',
        rejectsTenant: false,
      },
    ]);
  });

  it("reports a trusted server missing from the tenant's registered servers", () => {
    const snapshot = makeSnapshot(1, [
      makeTenant('a', { gatewayPolicy: { trustedServers: ['files', 'ghost'] } }),
    ]);
    expect(checkSnapshotConsistency(snapshot)).toEqual([
      {
        code: 'TRUSTED_SERVER_UNREGISTERED',
        tenantId: 'a',
        path: ['tenants', 0, 'gatewayPolicy', 'trustedServers', 1],
        message: 'trusted server ghost is not registered',
        rejectsTenant: false,
      },
    ]);
  });

  it('rejects every tenant that claims an API key prefix, key id or agent id', () => {
    const a = makeTenant('a');
    const b = makeTenant('b', {
      apiKeys: [{ ...a.apiKeys[0]!, secretHash: 'other' }],
      agents: [{ ...a.agents[0]! }],
    });
    const problems = checkSnapshotConsistency(makeSnapshot(1, [a, b, makeTenant('c')]));
    expect(problems.every((p) => p.code === 'ID_CLAIMED_TWICE' && p.rejectsTenant)).toBe(true);
    expect(problems.map((p) => `${p.tenantId} ${p.path.join('.')}`).sort()).toEqual([
      'a tenants.0.agents.0.id',
      'a tenants.0.apiKeys.0.id',
      'a tenants.0.apiKeys.0.prefix',
      'b tenants.1.agents.0.id',
      'b tenants.1.apiKeys.0.id',
      'b tenants.1.apiKeys.0.prefix',
    ]);
    expect(problems.find((p) => p.path.at(-1) === 'prefix')?.message).toBe(
      'API key prefix a-prefix is claimed 2 times (tenants a, b)',
    );
  });

  it('accepts one agent public key in two tenants and rejects it twice in one tenant', () => {
    const a = makeTenant('a');
    const sameKeyElsewhere = makeTenant('b', {
      agents: [{ ...a.agents[0]!, id: asAgentId('b-agent') }],
    });
    expect(checkSnapshotConsistency(makeSnapshot(1, [a, sameKeyElsewhere]))).toEqual([]);
    const twice = makeTenant('c', {
      agents: [...makeTenant('c').agents, { ...makeTenant('c').agents[0]!, id: asAgentId('c2') }],
    });
    const problems = checkSnapshotConsistency(makeSnapshot(1, [twice]));
    expect(problems.map((p) => [p.code, p.tenantId, p.path.join('.'), p.rejectsTenant])).toEqual([
      ['ID_CLAIMED_TWICE', 'c', 'tenants.0.agents.0.publicKey', true],
      ['ID_CLAIMED_TWICE', 'c', 'tenants.0.agents.1.publicKey', true],
    ]);
  });

  it('rejects a server id or policy version repeated inside a tenant, not across tenants', () => {
    const tenant = makeTenant('a', {
      servers: [...makeTenant('a').servers, ...makeTenant('a').servers],
      policies: [
        makePolicyVersion('team-rules', '1.0.0', 'rm'),
        makePolicyVersion('team-rules', '1.0.0', 'mv'),
      ],
    });
    const other = makeTenant('b', { policies: [makePolicyVersion('team-rules', '1.0.0', 'rm')] });
    const problems = checkSnapshotConsistency(makeSnapshot(1, [tenant, other]));
    expect(problems.map((p) => [p.code, p.tenantId, p.path.join('.'), p.rejectsTenant])).toEqual([
      ['ID_CLAIMED_TWICE', 'a', 'tenants.0.servers.0.serverId', true],
      ['ID_CLAIMED_TWICE', 'a', 'tenants.0.servers.1.serverId', true],
      ['ID_CLAIMED_TWICE', 'a', 'tenants.0.policies.0', true],
      ['ID_CLAIMED_TWICE', 'a', 'tenants.0.policies.1', true],
    ]);
  });

  it('rejects a tenant id that appears twice, at each occurrence', () => {
    const first = makeTenant('a');
    const second = makeTenant('a', {
      apiKeys: [],
      agents: [],
    });
    const problems = checkSnapshotConsistency(makeSnapshot(1, [first, second]));
    expect(problems).toEqual([
      expect.objectContaining({ code: 'TENANT_ID_REPEATED', path: ['tenants', 0, 'id'] }),
      expect.objectContaining({ code: 'TENANT_ID_REPEATED', path: ['tenants', 1, 'id'] }),
    ]);
  });
});

describe('groupProblemsByTenant', () => {
  it('groups the problems per tenant in first-seen order', () => {
    const snapshot = makeSnapshot(1, [
      makeTenant('b', { gatewayPolicy: { trustedServers: ['x', 'y'] } }),
      makeTenant('a', { gatewayPolicy: { pinnedPolicies: ['svc://gone@1.0.0'] } }),
    ]);
    const grouped = groupProblemsByTenant(checkSnapshotConsistency(snapshot));
    expect([...grouped.keys()]).toEqual(['b', 'a']);
    expect(grouped.get('b')?.map((p) => p.message)).toEqual([
      'trusted server x is not registered',
      'trusted server y is not registered',
    ]);
    expect(grouped.get('a')?.map((p) => p.code)).toEqual(['PIN_UNRESOLVED']);
  });
});
