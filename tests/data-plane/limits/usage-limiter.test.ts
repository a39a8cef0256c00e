// The call-count bound across data planes (docs/limits.md), on the limiter itself: three
// UsageLimiters on one database stand for three data-plane processes, without their processes, so
// a worst case can be arranged exactly (the fleet through real processes:
// tests/control-plane/limits-fleet.test.ts). The limiters never tick here (their interval is
// an hour): what they know comes from their own calls only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDataPlane } from '../../../control-plane/stream/credentials.js';
import { compileLimits } from '../../../data-plane/limits/compiled-limits.js';
import { type LimitCall, UsageLimiter } from '../../../data-plane/limits/usage-limiter.js';
import { usageLimitsRule } from '../../../shared/limits/usage-limits.js';
import { readUsage } from '../../../storage/tables/usage-counters.js';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { quickDatabaseKind } from '../inspect/support.js';

const HOUR_MS = 3_600_000;

describe('the call-count limit across data planes', () => {
  let test: TestDatabase;
  const limiters: UsageLimiter[] = [];

  beforeAll(async () => {
    test = await createTestDatabase(quickDatabaseKind);
    for (const name of ['dp-1', 'dp-2', 'dp-3']) await registerDataPlane(test.db, name);
  });
  afterAll(async () => {
    for (const limiter of limiters) await limiter.close();
    await test?.dispose();
  });

  const newLimiter = () => {
    const limiter = new UsageLimiter({
      db: test.db,
      flushIntervalMs: HOUR_MS,
      dataPlaneCountIntervalMs: HOUR_MS,
    });
    limiters.push(limiter);
    return limiter;
  };

  it('three data planes just started stay within max(10 % of maxCalls, one per data plane) of a stale view', async () => {
    const limits = compileLimits(
      usageLimitsRule.parse([
        { limitId: 'calls', per: 'AGENT', windowSeconds: 86_400, maxCalls: 100, action: 'DENY' },
      ]),
    ).all;
    const call: LimitCall = { tenantId: 't', agentId: 'a', toolName: 'search', args: {} };
    const [a, b, c] = [newLimiter(), newLimiter(), newLimiter()];
    const burst = async (limiter: UsageLimiter, count: number) => {
      const checks = await Promise.all(
        Array.from({ length: count }, () => limiter.reserve(call, limits)),
      );
      return checks.filter((check) => check.ok).length;
    };
    // Each learns the window's total once; then b alone takes the count to 99, which a and c do
    // not see: the worst case of a stale view, each allows what it may without asking.
    let allowed = 0;
    for (const limiter of [a, b, c]) allowed += await burst(limiter, 1);
    allowed += await burst(b, 96);
    expect(allowed).toBe(99);
    allowed += await burst(a, 20);
    allowed += await burst(c, 20);
    // Never refused below the maximum; with a slice of ⌊100 / 10 / 3⌋ = 3 each, at most 6 over it
    // (a lone process's slice, 10 each, would take it to 119).
    expect(allowed).toBeGreaterThanOrEqual(100);
    expect(allowed).toBeLessThanOrEqual(110);
    for (const limiter of [a, b, c]) await limiter.close();
    const [stored] = await readUsage(test.db, [
      { tenantId: 't', limitId: 'calls', agentId: 'a', toolName: '', windowSeconds: 86_400 },
    ]);
    expect(stored?.calls).toBe(allowed);
  });
});
