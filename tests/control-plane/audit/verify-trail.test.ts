// The server's chain check against the latest signed checkpoint (GraphQL verifyAuditTrail, the
// console's "Verify chain"), on both databases: a whole trail matches the checkpoint's root and
// names the witness that cosigned it, a time range is proven by an inclusion proof (or not
// reached when all of it is newer), and the two rewrites the chain alone cannot see — entries
// removed with the chain recomputed, and the newest entries cut off with the head moved back —
// fail against the checkpoint cut before them.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AuditEntry } from '../../../shared/audit/index.js';
import {
  rechainWithout,
  storeRewrittenTrail,
  truncateTrail,
} from '../../support/audit-tampering.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway, type TestTenant } from '../../support/gateway.js';
import { startTestWitness, type TestWitness } from '../../support/test-witness.js';
import { until } from '../../support/until.js';

const VERIFY = `query ($from: DateTime) {
  verifyAuditTrail(from: $from) {
    ok count partial firstBroken { code }
    checkpoint {
      ok status treeSize rootHash createdAt signedBy cosignedBy anchoredEntries
      findings { code message }
    }
  }
}`;

interface Verification {
  ok: boolean;
  count: number;
  partial: boolean;
  firstBroken: { code: string } | null;
  checkpoint: {
    ok: boolean;
    status: string;
    treeSize: number;
    rootHash: string;
    createdAt: string;
    signedBy: string | null;
    cosignedBy: string[];
    anchoredEntries: number;
    findings: { code: string; message: string }[];
  } | null;
}

describeEachDatabase('verifyAuditTrail against the latest checkpoint', (kind) => {
  let gw: TestGateway;
  let witness: TestWitness;

  const keys = new Map<string, string>();
  const keyOf = async (tenant: TestTenant) => {
    let key = keys.get(tenant.id);
    if (key === undefined) {
      key = await gw.addApiKey(tenant.id, ['audit:read']);
      keys.set(tenant.id, key);
    }
    return key;
  };
  const verify = async (tenant: TestTenant, from?: string): Promise<Verification> => {
    const response = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await keyOf(tenant)}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ query: VERIFY, variables: { from: from ?? null } }),
    });
    const body = (await response.json()) as {
      data?: { verifyAuditTrail: Verification };
      errors?: unknown;
    };
    expect(body.errors).toBeUndefined();
    return body.data?.verifyAuditTrail as Verification;
  };
  const append = async (tenant: TestTenant, count: number, action = 'test.event') => {
    for (let i = 0; i < count; i++) {
      await gw.runtime.audit.append({
        tenantId: tenant.id,
        action,
        resourceType: 'test',
        resourceId: `r${i}`,
      });
    }
  };
  const cut = async (tenant: TestTenant) => {
    const response = await fetch(`${gw.url}/api/v1/audit/checkpoint`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await keyOf(tenant)}` },
    });
    expect(response.status).toBe(200);
    return Number(response.headers.get('x-audit-tree-size'));
  };
  const entriesOf = async (tenant: TestTenant) => {
    const response = await fetch(`${gw.url}/api/v1/audit/export`, {
      headers: { authorization: `Bearer ${await keyOf(tenant)}` },
    });
    return (await response.json()) as AuditEntry[];
  };
  beforeAll(async () => {
    witness = await startTestWitness({ name: 'witness.test/verify' });
    gw = await startTestGateway(kind, {
      auditCheckpoints: {
        entries: 1_000_000,
        seconds: 3600,
        witness: { url: witness.url, key: witness.verifierKey },
      },
    });
    const logKey = (await (await fetch(`${gw.url}/api/v1/audit/checkpoint/key`)).text()).trim();
    witness.trust = { prefix: logKey.slice(0, logKey.indexOf('+')), logKey };
  });
  afterAll(async () => {
    await gw?.close();
    await witness?.close();
  });

  it('matches a whole trail to the root of the cosigned checkpoint, and names the witness', async () => {
    await append(gw.tenant, 4);
    const size = await cut(gw.tenant);
    await until(
      () => verify(gw.tenant),
      (result) => result.checkpoint?.cosignedBy.length === 1,
      'the witness cosignature',
    );
    // Entries after the checkpoint are chained but not yet anchored.
    await append(gw.tenant, 2);
    const result = await verify(gw.tenant);
    expect(result).toMatchObject({ ok: true, partial: false, count: size + 2, firstBroken: null });
    expect(result.checkpoint).toMatchObject({
      ok: true,
      status: 'MATCHED',
      treeSize: size,
      cosignedBy: [witness.name],
      anchoredEntries: size,
      findings: [],
    });
    expect(result.checkpoint?.signedBy).toMatch(/\/audit\+[0-9a-f]{8}$/);
  });

  it('proves a time range by inclusion, and reports a range newer than the checkpoint as not reached', async () => {
    const entries = await entriesOf(gw.tenant);
    const size = await cut(gw.tenant);
    const middle = entries[1] as AuditEntry;
    const ranged = await verify(gw.tenant, middle.createdAt);
    expect(ranged.ok).toBe(true);
    expect(ranged.partial).toBe(true);
    expect(ranged.checkpoint).toMatchObject({ ok: true, status: 'PROVEN', treeSize: size });

    await append(gw.tenant, 1, 'test.later');
    const newest = (await entriesOf(gw.tenant)).at(-1) as AuditEntry;
    const later = await verify(gw.tenant, newest.createdAt);
    expect(later.count).toBeGreaterThanOrEqual(1);
    expect(later.ok).toBe(true);
    expect(later.checkpoint).toMatchObject({ ok: true, status: 'NOT_REACHED', anchoredEntries: 0 });
  });

  it('fails a history rewritten after the checkpoint: a deny replaced and the chain recomputed', async () => {
    const tenant = await gw.addTenant();
    await append(tenant, 3, 'test.allowed');
    await append(tenant, 1, 'test.denied');
    await append(tenant, 2, 'test.allowed');
    const size = await cut(tenant);
    expect((await verify(tenant)).checkpoint?.status).toBe('MATCHED');

    // The attack: the deny removed, every later hash and seal recomputed, the head moved.
    const entries = await entriesOf(tenant);
    const last = entries.at(-1) as AuditEntry;
    // ... and an innocent entry at the end, so the trail has the checkpoint's size again.
    const filler = { ...last, id: 'rewritten-filler', resourceId: 'filler', metadata: {} };
    const rewritten = rechainWithout(
      [...entries, filler],
      (entry) => entry.action === 'test.denied',
    );
    await storeRewrittenTrail(gw.db, tenant.id, entries, rewritten);

    const result = await verify(tenant);
    // The chain alone is whole again: only the checkpoint sees the rewrite.
    expect(result.firstBroken).toBeNull();
    expect(result.count).toBe(size);
    expect(result.ok).toBe(false);
    expect(result.checkpoint).toMatchObject({ ok: false, status: 'FAILED', treeSize: size });
    expect(result.checkpoint?.findings[0]?.code).toBe('AUDIT_CHECKPOINT_ROOT_MISMATCH');
  });

  it('fails a trail cut short after the checkpoint: the newest entries gone and the head moved back', async () => {
    const tenant = await gw.addTenant();
    await append(tenant, 5);
    const size = await cut(tenant);
    await truncateTrail(gw.db, tenant.id, 3);
    const result = await verify(tenant);
    expect(result.firstBroken).toBeNull();
    expect(result.count).toBe(3);
    expect(result.ok).toBe(false);
    expect(result.checkpoint).toMatchObject({ ok: false, status: 'FAILED', treeSize: size });
    expect(result.checkpoint?.findings.map((f) => f.code)).toContain(
      'AUDIT_CHECKPOINT_NOT_REACHED',
    );
  });
});
