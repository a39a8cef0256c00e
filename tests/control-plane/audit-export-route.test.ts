// GET /api/v1/audit/export over real HTTP against a real gateway, on both databases: the caller's
// tenant's trail as a verifiable export (our verifier accepts it), its head in the headers, a
// slice by time, tenant isolation, and every refusal with its status and reasonCode.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyAuditChain } from '../../shared/audit/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';

describeEachDatabase('GET /api/v1/audit/export', (kind) => {
  let gw: TestGateway;
  let auditor: string;

  const exportWith = (key: string | null, query = '') =>
    fetch(`${gw.url}/api/v1/audit/export${query}`, {
      headers: key === null ? {} : { authorization: `Bearer ${key}` },
    });

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    auditor = await gw.addApiKey(gw.tenant.id, ['audit:read']);
    await gw.setPolicy(gw.tenant.id, { trustedServers: ['files'], blockedTools: ['drop_table'] });
    for (let i = 0; i < 3; i++) {
      await gw.inspect(inspectBody(gw.tenant.agentId, { tool: 'drop_table' }));
    }
  });
  afterAll(() => gw?.close());

  it("streams the tenant's whole trail as an export our verifier accepts, head in the headers", async () => {
    const response = await exportWith(auditor);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-audit-slice')).toBe('false');
    const entries = (await response.json()) as { tenantId: string; action: string; hash: string }[];
    expect(entries.filter((entry) => entry.action === 'inspect.deny')).toHaveLength(3);
    expect(new Set(entries.map((entry) => entry.tenantId))).toEqual(new Set([gw.tenant.id]));
    const verified = await verifyAuditChain(entries);
    expect(verified).toMatchObject({ ok: true, count: entries.length });
    expect(response.headers.get('x-audit-head-seq')).toBe(String(entries.length));
    expect(response.headers.get('x-audit-head-hash')).toBe(entries.at(-1)?.hash);
  });

  it('selects a slice by time (verifiable with partial) and shows no other tenant', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const empty = await exportWith(auditor, `?from=${encodeURIComponent(future)}`);
    expect(empty.status).toBe(200);
    expect(empty.headers.get('x-audit-slice')).toBe('true');
    expect(await empty.json()).toEqual([]);

    const other = await gw.addTenant();
    const otherAuditor = await gw.addApiKey(other.id, ['audit:read']);
    const theirs = (await (await exportWith(otherAuditor)).json()) as { tenantId: string }[];
    expect(theirs.every((entry) => entry.tenantId === other.id)).toBe(true);
    expect(JSON.stringify(theirs)).not.toContain(gw.tenant.id);
    // The tenant is the key's: a query parameter naming another one is not a way in.
    const asked = (await (await exportWith(auditor, `?tenant=${other.id}`)).json()) as {
      tenantId: string;
    }[];
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((entry) => entry.tenantId === gw.tenant.id)).toBe(true);
  });

  it('refuses without a key (401), without audit:read (403) and with bad bounds (400)', async () => {
    const cases: [string | null, string, number, string][] = [
      [null, '', 401, 'AUTH_INVALID_API_KEY'],
      [gw.tenant.key, '', 403, 'AUTH_INSUFFICIENT_SCOPE'],
      [auditor, '?from=yesterday', 400, 'REQUEST_INVALID'],
      [auditor, '?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 400, 'REQUEST_INVALID'],
    ];
    for (const [key, query, status, reasonCode] of cases) {
      const response = await exportWith(key, query);
      expect(response.status, `${query} ${key === null ? 'no key' : ''}`).toBe(status);
      expect(((await response.json()) as { reasonCode: string }).reasonCode).toBe(reasonCode);
    }
  });
});
