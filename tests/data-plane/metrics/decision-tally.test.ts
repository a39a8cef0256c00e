// The data plane's decision tally: one row per decision dimension set, per tenant and minute;
// drained whole; bounded per tenant-minute (later tools count as `(other)`) and in all.
import { describe, expect, it } from 'vitest';
import { DecisionTally } from '../../../data-plane/metrics/decision-tally.js';

const MINUTE = 60_000;

function tallyAt(start: number, options: ConstructorParameters<typeof DecisionTally>[0] = {}) {
  const clock = { now: start };
  return { clock, tally: new DecisionTally({ ...options, now: () => clock.now }) };
}

describe('DecisionTally', () => {
  it('counts per tenant, minute, outcome, denied tool and reason code; drain empties it', () => {
    const { clock, tally } = tallyAt(100 * MINUTE + 5);
    tally.count('t1', 'allow', 'files', 'echo', null);
    tally.count('t1', 'allow', 'files', 'read', null);
    tally.count('t1', 'deny', 'db', 'drop', 'MCP_SERVER_NOT_WHITELISTED');
    tally.count('t1', 'deny', 'db', 'drop', 'MCP_SERVER_NOT_WHITELISTED');
    tally.count('t1', 'require_human_approval', 'files', 'write', 'APPROVAL_REQUIRED');
    tally.count('t2', 'deny', undefined, undefined, 'MCP_MALFORMED_RPC');
    clock.now += MINUTE;
    tally.count('t1', 'allow', 'files', 'echo', null);
    expect(tally.drain()).toEqual([
      row('t1', 100, 'allow', '', '', '', 2),
      row('t1', 100, 'deny', 'db', 'drop', 'MCP_SERVER_NOT_WHITELISTED', 2),
      row('t1', 100, 'require_human_approval', '', '', 'APPROVAL_REQUIRED', 1),
      row('t2', 100, 'deny', '', '', 'MCP_MALFORMED_RPC', 1),
      row('t1', 101, 'allow', '', '', '', 1),
    ]);
    expect(tally.size).toBe(0);
    expect(tally.drain()).toEqual([]);
  });

  it('counts tools past the per tenant-minute cap under (other), by reason code', () => {
    const { tally } = tallyAt(0, { maxKeysPerTenantMinute: 2 });
    tally.count('t', 'deny', 's', 'a', 'R1');
    tally.count('t', 'deny', 's', 'b', 'R1');
    tally.count('t', 'deny', 's', 'c', 'R1');
    tally.count('t', 'deny', 's', 'd', 'R1');
    tally.count('t', 'deny', 's', 'a', 'R1');
    expect(tally.drain()).toEqual([
      row('t', 0, 'deny', 's', 'a', 'R1', 2),
      row('t', 0, 'deny', 's', 'b', 'R1', 1),
      row('t', 0, 'deny', '', '(other)', 'R1', 2),
    ]);
  });

  it('cuts a very long tool name', () => {
    const { tally } = tallyAt(0);
    tally.count('t', 'deny', 's', 'x'.repeat(1000), 'R');
    expect(tally.drain()[0]?.toolName).toHaveLength(200);
  });

  it('takes back undelivered rows, adding them to what was counted since, within bounds', () => {
    const { clock, tally } = tallyAt(2000 * MINUTE, { maxRows: 3 });
    tally.count('t', 'allow', undefined, undefined, null);
    const undelivered = tally.drain();
    tally.count('t', 'allow', undefined, undefined, null);
    tally.restore([...undelivered, row('t', 0, 'allow', '', '', '', 9)]); // older than 24 h
    expect(tally.drain()).toEqual([row('t', 2000, 'allow', '', '', '', 2)]);
    // Past maxRows the oldest minutes go first.
    for (let i = 0; i < 5; i++) {
      tally.count('t', 'allow', undefined, undefined, null);
      clock.now += MINUTE;
    }
    expect(tally.drain().map((r) => r.minute / MINUTE)).toEqual([2002, 2003, 2004]);
  });
});

function row(
  tenantId: string,
  minute: number,
  outcome: 'allow' | 'deny' | 'require_human_approval',
  serverId: string,
  toolName: string,
  reasonCode: string,
  count: number,
) {
  return { tenantId, minute: minute * MINUTE, outcome, serverId, toolName, reasonCode, count };
}
