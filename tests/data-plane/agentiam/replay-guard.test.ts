// The single-use store of Agent-Proof jtis, on a fake clock: a jti is refused while its proof could
// still be accepted (60 s either side of iat), forgotten after, scoped per agent key, and the store
// never grows past its capacity — when full it refuses (fail closed) rather than forget a live jti.
import { describe, expect, it } from 'vitest';
import { PROOF_WINDOW_MS, ReplayGuard } from '../../../data-plane/agentiam/replay-guard.js';

const T0 = 1_800_000_000_000;
const iatOf = (ms: number) => Math.floor(ms / 1000);

describe('ReplayGuard', () => {
  it('accepts a jti once while its proof is valid, and forgets it after the window', () => {
    const guard = new ReplayGuard();
    expect(guard.claim('key', 'jti-1', iatOf(T0), T0)).toBe('claimed');
    expect(guard.claim('key', 'jti-1', iatOf(T0), T0 + 1)).toBe('replayed');
    expect(guard.claim('key', 'jti-1', iatOf(T0), T0 + PROOF_WINDOW_MS)).toBe('replayed');
    // Long after the window (the proof itself would be refused as expired): forgotten.
    expect(guard.claim('key', 'jti-2', iatOf(T0), T0 + 10 * PROOF_WINDOW_MS)).toBe('claimed');
    expect(guard.size).toBe(1);
    expect(guard.claim('key', 'jti-1', iatOf(T0), T0 + 10 * PROOF_WINDOW_MS)).toBe('claimed');
  });

  it('remembers a proof dated ahead of the clock until its own window ends', () => {
    const guard = new ReplayGuard();
    const iat = iatOf(T0 + PROOF_WINDOW_MS);
    expect(guard.claim('key', 'ahead', iat, T0)).toBe('claimed');
    // At T0 + 2 windows the proof (iat = T0 + 1 window) is still within 60 s of the clock.
    expect(guard.claim('key', 'ahead', iat, T0 + 2 * PROOF_WINDOW_MS)).toBe('replayed');
  });

  it('scopes jtis by agent key: one agent cannot burn another agent’s jti', () => {
    const guard = new ReplayGuard();
    expect(guard.claim('key-a', 'same', iatOf(T0), T0)).toBe('claimed');
    expect(guard.claim('key-b', 'same', iatOf(T0), T0)).toBe('claimed');
  });

  it('refuses new proofs when full, until live ones age out', () => {
    const guard = new ReplayGuard({ capacity: 3 });
    for (const jti of ['a', 'b', 'c']) expect(guard.claim('k', jti, iatOf(T0), T0)).toBe('claimed');
    expect(guard.claim('k', 'd', iatOf(T0), T0 + 1000)).toBe('full');
    expect(guard.claim('k', 'a', iatOf(T0), T0 + 1000)).toBe('replayed');
    expect(guard.size).toBe(3);
    expect(guard.claim('k', 'd', iatOf(T0 + 3 * PROOF_WINDOW_MS), T0 + 3 * PROOF_WINDOW_MS)).toBe(
      'claimed',
    );
    expect(guard.size).toBe(1);
  });

  it('stays bounded under a stream of fresh proofs over time', () => {
    const guard = new ReplayGuard({ capacity: 100_000 });
    let peak = 0;
    for (let second = 0; second < 600; second++) {
      const now = T0 + second * 1000;
      for (let i = 0; i < 50; i++) {
        expect(guard.claim('k', `${second}-${i}`, iatOf(now), now)).toBe('claimed');
      }
      peak = Math.max(peak, guard.size);
    }
    // 50 a second, each remembered for at most its window plus margin and bucket: ≈ 75 s.
    expect(peak).toBeLessThanOrEqual(50 * 75);
  });
});
