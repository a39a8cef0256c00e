// The failure limiter alone (no gateway): it is asked only about failed authentications; a key
// over its limit is blocked for a window, and each new block of the same key doubles, up to the
// cap; a quiet key starts over.
import { describe, expect, it } from 'vitest';
import { AuthFailureLimiter } from '../../../data-plane/oauth/auth-failure-limiter.js';

const CLIENT = 'agc_AAAAAAAAAAAAAAAAAAAAAA';

describe('AuthFailureLimiter', () => {
  it('answers the failures that reach the limit as they are, then refuses until the block ends', () => {
    const limiter = new AuthFailureLimiter({ perClient: 3, perAddress: 100, windowMs: 60_000 });
    expect([0, 1, 2].map((i) => limiter.refuseFailure(CLIENT, '10.0.0.1', i))).toEqual([0, 0, 0]);
    expect(limiter.refuseFailure(CLIENT, '10.0.0.1', 1_000)).toBe(60);
    // Another address, or another client id at this address, is not blocked.
    expect(limiter.refuseFailure(CLIENT, '10.0.0.2', 1_000)).toBe(0);
    expect(limiter.refuseFailure('agc_BBBBBBBBBBBBBBBBBBBBBB', '10.0.0.1', 1_000)).toBe(0);
    expect(limiter.refuseFailure(CLIENT, '10.0.0.1', 60_002)).toBe(0);
  });

  it('backs off: each block of the same key lasts twice the last, up to maxBlockMs', () => {
    const limiter = new AuthFailureLimiter({
      perClient: 2,
      perAddress: 100,
      windowMs: 10_000,
      maxBlockMs: 35_000,
    });
    let now = 0;
    const blockLength = () => {
      limiter.refuseFailure(CLIENT, 'a', now);
      limiter.refuseFailure(CLIENT, 'a', now);
      const seconds = limiter.refuseFailure(CLIENT, 'a', now);
      now += seconds * 1000;
      return seconds;
    };
    expect([blockLength(), blockLength(), blockLength(), blockLength()]).toEqual([10, 20, 35, 35]);
    // Quiet for maxBlockMs after the last block: the key starts over.
    now += 35_000;
    expect(blockLength()).toBe(10);
  });

  it('limits an address spraying client ids, and failures without a client id', () => {
    const limiter = new AuthFailureLimiter({ perClient: 100, perAddress: 2 });
    expect(limiter.refuseFailure(undefined, '10.0.0.9', 0)).toBe(0);
    expect(limiter.refuseFailure(CLIENT, '10.0.0.9', 0)).toBe(0);
    expect(limiter.refuseFailure('agc_CCCCCCCCCCCCCCCCCCCCCC', '10.0.0.9', 0)).toBe(60);
  });
});
