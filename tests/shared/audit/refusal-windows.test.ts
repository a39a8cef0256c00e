// The bounding of refusal audit entries, on a fake clock: one entry of its own per subject and
// code a window, one summary with the count of the rest when the window ends, and a bounded
// number of windows (overflow folded into one summary per tenant).
import { describe, expect, it } from 'vitest';
import {
  type Refusal,
  type RefusalSummary,
  RefusalWindows,
} from '../../../shared/audit/refusal-windows.js';

const MINUTE = 60_000;
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

function windows(maxWindows?: number): RefusalWindows {
  let next = 0;
  return new RefusalWindows({ newId: () => `entry-${++next}`, maxWindows });
}

function refusal(overrides: Partial<Refusal> = {}): Refusal {
  return {
    tenantId: 'ten_a',
    subjectType: 'api_key',
    subject: 'key_1',
    code: 'AUTH_INSUFFICIENT_SCOPE',
    route: 'POST /api/v1/agents/spawn',
    detail: 'the key lacks agents:manage',
    ...overrides,
  };
}

describe('RefusalWindows', () => {
  it('writes the first refusal of a subject and code, counts the rest of the minute, and summarizes them when it ends', () => {
    const w = windows();
    expect(w.record(refusal(), T0)).toEqual({ kind: 'entry', entryId: 'entry-1' });
    for (let i = 1; i < 50; i++) {
      expect(w.record(refusal({ route: i % 2 ? 'GET /x' : 'POST /y' }), T0 + i * 100)).toEqual({
        kind: 'counted',
      });
    }
    expect(w.takeEnded(T0 + MINUTE - 1)).toEqual([]);
    expect(w.nextEnd()).toBe(T0 + MINUTE);
    const [summary, ...rest] = w.takeEnded(T0 + MINUTE);
    expect(rest).toEqual([]);
    expect(summary).toEqual({
      kind: 'summary',
      tenantId: 'ten_a',
      subjectType: 'api_key',
      subject: 'key_1',
      code: 'AUTH_INSUFFICIENT_SCOPE',
      count: 49,
      firstEntryId: 'entry-1',
      windowStart: T0,
      windowEnd: T0 + MINUTE,
      firstAt: T0 + 100,
      lastAt: T0 + 4900,
      routes: ['GET /x', 'POST /y'],
    } satisfies RefusalSummary);
    expect(w.size).toBe(0);
    expect(w.nextEnd()).toBeUndefined();
  });

  it('writes no summary for a window that counted nothing', () => {
    const w = windows();
    w.record(refusal(), T0);
    expect(w.nextEnd()).toBeUndefined();
    expect(w.takeEnded(T0 + MINUTE)).toEqual([]);
    expect(w.size).toBe(0);
  });

  it('keys windows by tenant, subject and code', () => {
    const w = windows();
    const kinds = [
      refusal(),
      refusal({ code: 'MCP_SESSION_FORBIDDEN' }),
      refusal({ subject: 'key_2' }),
      refusal({ subjectType: 'oauth_client' }),
      refusal({ tenantId: 'ten_b' }),
    ].map((r) => w.record(r, T0).kind);
    expect(kinds).toEqual(['entry', 'entry', 'entry', 'entry', 'entry']);
    expect(w.record(refusal({ subject: 'key_2' }), T0 + 1).kind).toBe('counted');
  });

  it('ends a window at the next refusal of its key after it: summary, then a new first entry', () => {
    const w = windows();
    w.record(refusal(), T0);
    w.record(refusal(), T0 + 10);
    w.record(refusal(), T0 + 20);
    expect(w.record(refusal(), T0 + MINUTE + 5)).toEqual({ kind: 'entry', entryId: 'entry-2' });
    expect(w.nextEnd()).toBe(0);
    const ended = w.takeEnded(T0 + MINUTE + 5);
    expect(ended).toMatchObject([{ kind: 'summary', count: 2, firstEntryId: 'entry-1' }]);
    expect(w.size).toBe(1);
  });

  it('hands every open window that counted something to takeAll (shutdown), and forgets all', () => {
    const w = windows();
    w.record(refusal(), T0);
    w.record(refusal(), T0 + 1);
    w.record(refusal({ subject: 'key_2' }), T0 + 2);
    expect(w.takeAll()).toMatchObject([{ kind: 'summary', subject: 'key_1', count: 1 }]);
    expect(w.size).toBe(0);
    expect(w.takeAll()).toEqual([]);
  });

  it('folds new subjects into one overflow summary per tenant when every window is taken', () => {
    const w = windows(3);
    for (const subject of ['k1', 'k2', 'k3']) w.record(refusal({ subject }), T0);
    // Full: new subjects get no entry of their own.
    for (let i = 0; i < 100; i++) {
      const code = i % 4 === 0 ? 'MCP_SESSION_FORBIDDEN' : 'AUTH_INSUFFICIENT_SCOPE';
      expect(w.record(refusal({ subject: `spray-${i}`, code }), T0 + 1 + i).kind).toBe('counted');
    }
    w.record(refusal({ tenantId: 'ten_b', subject: 'x' }), T0 + 200);
    // Subjects with a window still count into it.
    expect(w.record(refusal({ subject: 'k1' }), T0 + 300).kind).toBe('counted');
    expect(w.size).toBe(5);
    const ended = w.takeEnded(T0 + MINUTE + 1000);
    expect(ended).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'summary', subject: 'k1', count: 1 }),
        {
          kind: 'overflow',
          tenantId: 'ten_a',
          count: 100,
          codes: { MCP_SESSION_FORBIDDEN: 25, AUTH_INSUFFICIENT_SCOPE: 75 },
          windowStart: T0 + 1,
          windowEnd: T0 + 1 + MINUTE,
          firstAt: T0 + 1,
          lastAt: T0 + 100,
        },
        expect.objectContaining({ kind: 'overflow', tenantId: 'ten_b', count: 1 }),
      ]),
    );
    expect(ended).toHaveLength(3);
    expect(w.size).toBe(0);
  });

  it('gives a slot back when the oldest window has ended, before folding', () => {
    const w = windows(1);
    w.record(refusal({ subject: 'k1' }), T0);
    w.record(refusal({ subject: 'k1' }), T0 + 1);
    expect(w.record(refusal({ subject: 'k2' }), T0 + MINUTE).kind).toBe('entry');
    expect(w.takeEnded(T0 + MINUTE)).toMatchObject([{ subject: 'k1', count: 1 }]);
  });

  it('never holds more windows than its bound plus one overflow window per tenant', () => {
    const w = windows(50);
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      w.record(refusal({ tenantId: `ten_${i % 3}`, subject: `s-${i}` }), T0 + i);
      most = Math.max(most, w.size);
    }
    expect(most).toBe(53);
  });
});
