// API-key authentication against the compiled snapshot, with the per-snapshot memory of verified
// secrets: remembering a secret must never let a different one through, nor outlive the snapshot
// (a key revoked by the next snapshot is refused at once).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findPresentedKey } from '../../../data-plane/plugins/auth.js';
import { compileSnapshot } from '../../../data-plane/store/compiled-snapshot.js';
import { GatewayError } from '../../../shared/errors/index.js';
import {
  equalInConstantTime,
  generateApiKey,
  parseApiKey,
} from '../../../shared/identity/api-keys.js';
import { makeSnapshot, makeTenant } from '../../shared/snapshot/snapshot-fixture.js';

function snapshotWithKey(version: number, key: ReturnType<typeof generateApiKey>) {
  return compileSnapshot(
    makeSnapshot(version, [
      makeTenant('t1', {
        apiKeys: [
          {
            id: 'k1',
            prefix: key.prefix,
            secretHash: key.secretHash,
            scopes: ['agents:execute'],
            expiresAt: null,
          },
        ],
      }),
    ]),
  );
}

function refusal(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof GatewayError ? error.code : 'not a GatewayError';
  }
}

describe('findPresentedKey', () => {
  const key = generateApiKey();
  const other = parseApiKey(generateApiKey().key)!.secret;
  const wrongSecret = `agk_${key.prefix}_${other}`;

  it('accepts the key again and again, and never a different secret with its prefix', () => {
    const snapshot = snapshotWithKey(1, key);
    for (let i = 0; i < 3; i++) {
      expect(findPresentedKey(`Bearer ${key.key}`, snapshot).id).toBe('k1');
      expect(refusal(() => findPresentedKey(`Bearer ${wrongSecret}`, snapshot))).toBe(
        'AUTH_INVALID_API_KEY',
      );
    }
  });

  it('forgets verified secrets with the snapshot: a key the next snapshot drops is refused', () => {
    const first = snapshotWithKey(1, key);
    expect(findPresentedKey(`Bearer ${key.key}`, first).id).toBe('k1');
    const rotated = snapshotWithKey(2, generateApiKey());
    expect(refusal(() => findPresentedKey(`Bearer ${key.key}`, rotated))).toBe(
      'AUTH_INVALID_API_KEY',
    );
  });

  it('refuses an expired key even when its secret was verified before', () => {
    const snapshot = snapshotWithKey(1, key);
    expect(findPresentedKey(`Bearer ${key.key}`, snapshot, 0).id).toBe('k1');
    const expired = compileSnapshot(
      makeSnapshot(3, [
        makeTenant('t1', {
          apiKeys: [
            {
              id: 'k1',
              prefix: key.prefix,
              secretHash: key.secretHash,
              scopes: [],
              expiresAt: new Date(1000).toISOString(),
            },
          ],
        }),
      ]),
    );
    expect(findPresentedKey(`Bearer ${key.key}`, expired, 0).id).toBe('k1');
    expect(refusal(() => findPresentedKey(`Bearer ${key.key}`, expired, 1000))).toBe(
      'AUTH_INVALID_API_KEY',
    );
  });
});

describe('equalInConstantTime', () => {
  it('agrees with === on every pair of strings', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(equalInConstantTime(a, b)).toBe(a === b);
        expect(equalInConstantTime(a, a)).toBe(true);
      }),
    );
  });
});
