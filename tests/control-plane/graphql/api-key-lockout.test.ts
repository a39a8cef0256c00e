// Issue 22 item 1: one scoped key must not lock the administrator out. Over real HTTP against a
// real gateway, on both databases: a key may only revoke keys whose scopes it holds itself
// (AUTH_INSUFFICIENT_SCOPE, nothing changed, nothing audited), and the gateway's last live key
// holding tenants:admin cannot be revoked (API_KEY_LAST_ADMIN, 409) — expired keys do not count,
// and two concurrent revocations of the last two admin keys never both succeed.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../../control-plane/services/tenants.js';
import { ERROR_CODES, GatewayError } from '../../../shared/errors/index.js';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { errorCodes, graphql, type Loose } from './support.js';

const REVOKE = 'mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }';
const ME = '{ me { apiKeyId } }';

describeEachDatabase('API key revocation guards', (kind) => {
  let gw: TestGateway;
  const q = (key: string, query: string, variables?: Record<string, unknown>) =>
    graphql<Record<string, Loose>>(gw.url, key, query, variables);

  /** A key of the test tenant created through the service, and its id. */
  const addKey = async (scopes: readonly string[], expiresAt?: Date) => {
    const created = await createApiKey(gw.db, {
      tenantId: gw.tenant.id,
      name: 'test',
      scopes,
      expiresAt: expiresAt ?? null,
    });
    await gw.sync();
    return { id: created.id, key: created.key };
  };
  const liveAdminKeys = () =>
    gw.db.prisma.apiKey.findMany({
      where: {
        scopes: { has: 'tenants:admin' },
        revokedAt: null,
        OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
      },
      select: { id: true },
    });
  const revocationsAudited = (id: string) =>
    gw.db.prisma.auditEntry.count({ where: { action: 'api_key.revoked', resourceId: id } });
  const revokedAt = async (id: string) =>
    (await gw.db.prisma.apiKey.findUniqueOrThrow({ where: { id } })).revokedAt;
  /** Revokes every live admin key but `keep` directly in the database (test isolation). */
  const leaveOnlyAdmin = async (keep: string) => {
    await gw.db.prisma.apiKey.updateMany({
      where: { scopes: { has: 'tenants:admin' }, revokedAt: null, id: { not: keep } },
      data: { revokedAt: new Date() },
    });
    await gw.sync();
  };

  beforeAll(async () => {
    gw = await startTestGateway(kind);
  });
  afterAll(() => gw?.close());

  it('a keys:manage key cannot revoke the admin key: AUTH_INSUFFICIENT_SCOPE, nothing changed or audited', async () => {
    const admin = await addKey(ALL_SCOPES);
    const manager = await addKey(['keys:manage']);
    const auditor = await addKey(['audit:read']);
    for (const target of [admin, auditor]) {
      const answer = await q(manager.key, REVOKE, { id: target.id });
      expect(answer.status).toBe(200);
      expect(errorCodes(answer)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
      expect(answer.errors?.[0]?.message).toMatch(/needs scope/);
      expect(answer.data).toBeNull();
      expect(await revokedAt(target.id)).toBeNull();
      expect(await revocationsAudited(target.id)).toBe(0);
      expect((await q(target.key, ME)).data?.me.apiKeyId).toBe(target.id);
    }
    // The message names what the caller lacks: every scope of the admin key but keys:manage.
    const refused = await q(manager.key, REVOKE, { id: admin.id });
    expect(refused.errors?.[0]?.message).toContain('tenants:admin');
    expect(refused.errors?.[0]?.message).not.toContain('keys:manage');

    // A key whose scopes the caller holds is revoked as before.
    const peer = await addKey(['keys:manage']);
    const revoked = await q(manager.key, REVOKE, { id: peer.id });
    expect(revoked.errors).toBeUndefined();
    expect(revoked.data?.revokeApiKey.revokedAt).toBeTruthy();
    expect(await revocationsAudited(peer.id)).toBe(1);
    expect((await q(peer.key, ME)).status).toBe(401);
  });

  it("the gateway's last live admin key cannot be revoked: API_KEY_LAST_ADMIN (409), nothing changed or audited", async () => {
    expect(ERROR_CODES.API_KEY_LAST_ADMIN.status).toBe(409);
    const first = await addKey(ALL_SCOPES);
    await leaveOnlyAdmin(first.id);
    // An expired admin key is no administrator: it does not make the live one revocable.
    const expired = await addKey(ALL_SCOPES, new Date(Date.now() - 60_000));

    const refused = await q(first.key, REVOKE, { id: first.id });
    expect(errorCodes(refused)).toEqual(['API_KEY_LAST_ADMIN']);
    expect(refused.errors?.[0]?.extensions?.hint).toContain('agent-gateway admin-key reset');
    expect(refused.data).toBeNull();
    expect(await revokedAt(first.id)).toBeNull();
    expect(await revocationsAudited(first.id)).toBe(0);
    expect((await q(first.key, ME)).data?.me.apiKeyId).toBe(first.id);

    // The expired one itself may go: revoking it changes no one's access.
    expect(errorCodes(await q(first.key, REVOKE, { id: expired.id }))).toEqual([]);

    // With a second admin key, the first may go; then the second is the last one.
    const created = await q(
      first.key,
      'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { apiKey { id } secret } }',
      { i: { name: 'second admin', scopes: [...ALL_SCOPES] } },
    );
    const second = {
      id: created.data?.createApiKey.apiKey.id as string,
      key: created.data?.createApiKey.secret as string,
    };
    expect(errorCodes(await q(second.key, REVOKE, { id: first.id }))).toEqual([]);
    expect(errorCodes(await q(second.key, REVOKE, { id: second.id }))).toEqual([
      'API_KEY_LAST_ADMIN',
    ]);
    expect(await liveAdminKeys()).toEqual([{ id: second.id }]);
  });

  it('two concurrent revocations of the last two admin keys never both succeed', async () => {
    const rounds = 8;
    for (let round = 0; round < rounds; round++) {
      const a = await addKey(ALL_SCOPES);
      await leaveOnlyAdmin(a.id);
      const b = await addKey(ALL_SCOPES);
      const outcomes = await Promise.allSettled([
        revokeApiKey(gw.db, gw.tenant.id, a.id, new Set(ALL_SCOPES)),
        revokeApiKey(gw.db, gw.tenant.id, b.id, new Set(ALL_SCOPES)),
      ]);
      const succeeded = outcomes.filter((o) => o.status === 'fulfilled');
      const refused = outcomes.flatMap((o) =>
        o.status === 'rejected' && o.reason instanceof GatewayError ? [o.reason.code] : [],
      );
      expect(succeeded.map((o) => (o as PromiseFulfilledResult<boolean>).value)).toEqual([true]);
      expect(refused).toEqual(['API_KEY_LAST_ADMIN']);
      expect(await liveAdminKeys()).toHaveLength(1);
    }
  });
});
