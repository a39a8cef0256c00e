// The publisher rebuilds the snapshot when the configuration fingerprint changes. A data plane's
// token signing key belongs to no tenant, yet every data plane must serve it in its JWKS: a new
// key alone must change the fingerprint and reach the snapshot.
import { afterEach, expect, it } from 'vitest';
import {
  buildConfigSnapshot,
  readConfigFingerprint,
} from '../../../control-plane/snapshot/build-snapshot.js';
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
    expect(await readConfigFingerprint(t.db)).not.toBe(after);
  });
});
