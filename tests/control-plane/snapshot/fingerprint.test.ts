// The publisher rebuilds the snapshot when the configuration fingerprint changes. A data plane's
// token signing key belongs to no tenant, yet every data plane must serve it in its JWKS: a new
// key alone must change the fingerprint and reach the snapshot.
import { afterEach, expect, it } from 'vitest';
import {
  buildConfigSnapshot,
  readConfigFingerprint,
} from '../../../control-plane/snapshot/build-snapshot.js';
import { RETIRED_TOKEN_KEY_RETENTION_SECONDS } from '../../../shared/oauth/token-lifetimes.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../../support/databases.js';

describeEachDatabase('the configuration fingerprint', (kind) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('changes when a data plane registers a token signing key, and the snapshot carries it', async () => {
    t = await createTestDatabase(kind);
    const before = await readConfigFingerprint(t.db);
    await t.db.prisma.tokenSigningKey.create({
      data: { id: 'kid-1', publicJwk: { kty: 'OKP', crv: 'Ed25519', x: 'A'.repeat(43) } },
    });
    const after = await readConfigFingerprint(t.db);
    expect(after).not.toBe(before);
    const snapshot = await buildConfigSnapshot(t.db, 1);
    expect(snapshot.tokenSigningKeys.map((key) => key.kid)).toEqual(['kid-1']);
    await t.db.prisma.tokenSigningKey.update({
      where: { id: 'kid-1' },
      data: { retiredAt: new Date() },
    });
    const retired = await readConfigFingerprint(t.db);
    expect(retired).not.toBe(after);
    // Retired, the key stays in the snapshot while tokens it signed may be alive.
    expect((await buildConfigSnapshot(t.db, 2)).tokenSigningKeys).toEqual([
      expect.objectContaining({ kid: 'kid-1', retiredAt: expect.any(String) }),
    ]);
  });

  it('changes when a retired key outlives its retention, and the snapshot drops it', async () => {
    t = await createTestDatabase(kind);
    const past = (seconds: number) => new Date(Date.now() - seconds * 1000);
    await t.db.prisma.tokenSigningKey.createMany({
      data: [
        { id: 'old', publicJwk: {}, createdAt: past(2000), retiredAt: past(100) },
        { id: 'new', publicJwk: {}, createdAt: past(100) },
      ],
    });
    expect((await buildConfigSnapshot(t.db, 1)).tokenSigningKeys.map((key) => key.kid)).toEqual([
      'new',
      'old',
    ]);
    const served = await readConfigFingerprint(t.db);
    await t.db.prisma.tokenSigningKey.update({
      where: { id: 'old' },
      data: { retiredAt: past(RETIRED_TOKEN_KEY_RETENTION_SECONDS + 1) },
    });
    expect(await readConfigFingerprint(t.db)).not.toBe(served);
    expect((await buildConfigSnapshot(t.db, 2)).tokenSigningKeys).toEqual([
      { kid: 'new', publicJwk: {} },
    ]);
  });
});
