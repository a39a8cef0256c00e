// The usage limiter (docs/limits.md) on its own: three UsageLimiters on one database stand for
// three data-plane processes, without their processes, so that a worst case of the call-count
// bound can be arranged exactly; and one whose database goes away (the fleet through real
// processes: tests/control-plane/limits-fleet.test.ts). The limiters never tick here (their
// interval is an hour): what they know comes from their own calls only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDataPlane } from '../../../control-plane/stream/credentials.js';
import { type CompiledLimit, compileLimits } from '../../../data-plane/limits/compiled-limits.js';
import { type LimitCall, UsageLimiter } from '../../../data-plane/limits/usage-limiter.js';
import { usageLimitsRule } from '../../../shared/limits/usage-limits.js';
import { readUsage } from '../../../storage/tables/usage-counters.js';
import { createTestDatabase, dropSchema, type TestDatabase } from '../../support/databases.js';
import { quickDatabaseKind } from '../inspect/support.js';

const HOUR_MS = 3_600_000;

describe('the usage limiter of a data plane among others', () => {
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

  it('without its database a data plane serves a count it never read up to its allowance, and refuses budgets and NPL usage', async () => {
    const gone = await createTestDatabase(quickDatabaseKind);
    const limiter = new UsageLimiter({
      db: gone.db,
      flushIntervalMs: HOUR_MS,
      dataPlaneCountIntervalMs: HOUR_MS,
    });
    try {
      const [budget, calls] = compileLimits(
        usageLimitsRule.parse([
          {
            limitId: 'spend',
            per: 'AGENT',
            windowSeconds: 86_400,
            sumArgument: 'amount',
            maxSum: 100,
            action: 'DENY',
          },
          { limitId: 'calls', per: 'AGENT', windowSeconds: 86_400, maxCalls: 50, action: 'DENY' },
        ]),
      ).all as [CompiledLimit, CompiledLimit];
      const call = (agentId: string): LimitCall => ({
        tenantId: 't',
        agentId,
        toolName: 'pay',
        args: { amount: 1 },
      });
      // Started (the database's clock and the number of data planes read), then the database goes.
      expect((await limiter.reserve(call('seen'), [calls])).ok).toBe(true);
      await gone.db.close();
      const reasons = [];
      for (let i = 0; i < 6; i++) {
        const check = await limiter.reserve(call('unseen'), [calls]);
        reasons.push(check.ok ? 'ok' : check.reason);
      }
      // A slice of ⌊50 / 10 / 1⌋ = 5 calls no other process saw, then the database must decide.
      expect(reasons).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'unavailable']);
      expect((await limiter.reserve(call('unseen'), [budget])).ok).toBe(false);
      // NPL is never given a count that was not read.
      await expect(limiter.view(call('unseen'), [calls])).rejects.toThrow(/could not be read/);
    } finally {
      await limiter.close();
      // Closed above: only its schema is left to drop.
      if (gone.schema) await dropSchema(gone.schema);
    }
  });
});
