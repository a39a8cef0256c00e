// decision_counts on both databases: a report adds to its rows (duplicates within one report
// summed), rows of unknown tenants are dropped, a report id is written once per reporter, rows
// and ids older than 24 h are pruned by a write, and a read is aggregated over reporters inside
// one tenant only.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTenant } from '../../../control-plane/services/tenants.js';
import type { DecisionCountRow } from '../../../shared/decisions/decision-counts.js';
import {
  localReporter,
  readDecisionCounts,
  writeDecisionCounts,
} from '../../../storage/tables/decision-counts.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../../support/databases.js';

const MINUTE = 60_000;
const NOW = new Date('2026-11-24T12:00:30Z');
const AT = NOW.getTime() - (NOW.getTime() % MINUTE);

describeEachDatabase('decision_counts', (kind) => {
  let t: TestDatabase;
  let tenant: string;
  let other: string;
  const row = (patch: Partial<DecisionCountRow>): DecisionCountRow => ({
    tenantId: tenant,
    minute: AT,
    outcome: 'allow',
    serverId: '',
    toolName: '',
    reasonCode: '',
    count: 1,
    ...patch,
  });

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    tenant = (await createTenant(t.db, { name: 'counted' })).id;
    other = (await createTenant(t.db, { name: 'other' })).id;
  });
  afterAll(() => t?.dispose());

  it('adds reports up per reporter and reads them aggregated inside the tenant', async () => {
    const deny = { outcome: 'deny', serverId: 'db', toolName: 'drop', reasonCode: 'R1' } as const;
    await writeDecisionCounts(t.db, 'dp-a', [row({ count: 2 }), row({ ...deny, count: 1 })], {
      now: NOW,
    });
    await writeDecisionCounts(
      t.db,
      'dp-a',
      [
        row({ count: 3 }),
        row({ ...deny, count: 1 }),
        row({ ...deny, count: 1 }),
        // A malformed body: a deny without server or tool, and a client error.
        row({ outcome: 'deny', reasonCode: 'MCP_MALFORMED_RPC', count: 2 }),
      ],
      { now: NOW },
    );
    await writeDecisionCounts(
      t.db,
      localReporter('local'),
      [
        row({ minute: AT - MINUTE, outcome: 'require_human_approval', reasonCode: 'HOLD' }),
        row({ tenantId: other, count: 7 }),
        row({ tenantId: 'no-such-tenant', count: 9 }),
      ],
      { now: new Date(NOW.getTime() + 1000) },
    );
    const stored = await t.db.query<{ reporter: string; count: number }>(
      `select reporter, count from decision_counts where "tenantId" = $1 and reporter = 'dp-a'
        order by outcome, count desc`,
      [tenant],
    );
    expect(stored).toEqual([
      { reporter: 'dp-a', count: 5 },
      { reporter: 'dp-a', count: 3 },
      { reporter: 'dp-a', count: 2 },
    ]);
    const read = await readDecisionCounts(t.db, tenant, new Date(AT - 10 * MINUTE));
    expect(read.perMinute).toEqual([
      {
        minute: new Date(AT - MINUTE),
        outcome: 'require_human_approval',
        count: 1,
        clientErrors: 0,
      },
      { minute: new Date(AT), outcome: 'allow', count: 5, clientErrors: 0 },
      { minute: new Date(AT), outcome: 'deny', count: 5, clientErrors: 2 },
    ]);
    expect(read.topDeniedTools).toEqual([{ serverId: 'db', toolName: 'drop', count: 3 }]);
    expect(read.topReasonCodes).toEqual([
      { reasonCode: 'R1', count: 3 },
      { reasonCode: 'MCP_MALFORMED_RPC', count: 2 },
      { reasonCode: 'HOLD', count: 1 },
    ]);
    expect(read.reporters.map((r) => r.reporter)).toEqual(['local:local', 'dp-a']);
    // The window excludes older minutes.
    const recent = await readDecisionCounts(t.db, tenant, new Date(AT));
    expect(recent.perMinute.map((r) => r.outcome)).toEqual(['allow', 'deny']);
    const unknown = await t.db.query(
      `select 1 from decision_counts where "tenantId" = 'no-such-tenant'`,
    );
    expect(unknown).toEqual([]);
    const foreign = await readDecisionCounts(t.db, other, new Date(AT - 10 * MINUTE));
    expect(foreign.perMinute).toEqual([
      { minute: new Date(AT), outcome: 'allow', count: 7, clientErrors: 0 },
    ]);
  });

  it('writes a report id once per reporter: a report delivered again adds nothing', async () => {
    const tool = {
      outcome: 'deny',
      serverId: 'files',
      toolName: 'twice',
      reasonCode: 'R2',
    } as const;
    const report = [row({ ...tool, count: 4 })];
    const count = async () =>
      (
        await t.db.query<{ reporter: string; count: number }>(
          `select reporter, count from decision_counts where "toolName" = 'twice' order by reporter`,
        )
      ).map((r) => [r.reporter, r.count]);
    const id = 'f3b1c2d4-0000-4000-8000-000000000001';
    expect(await writeDecisionCounts(t.db, 'dp-a', report, { reportId: id, now: NOW })).toBe(true);
    expect(await writeDecisionCounts(t.db, 'dp-a', report, { reportId: id, now: NOW })).toBe(false);
    expect(await count()).toEqual([['dp-a', 4]]);
    // Another reporter's report of the same id, and a new id, are reports of their own.
    expect(await writeDecisionCounts(t.db, 'dp-b', report, { reportId: id, now: NOW })).toBe(true);
    await writeDecisionCounts(t.db, 'dp-a', report, { reportId: `${id}-2`, now: NOW });
    // Without an id (a data plane before report ids) every delivery adds.
    await writeDecisionCounts(t.db, 'dp-a', report, { now: NOW });
    expect(await count()).toEqual([
      ['dp-a', 12],
      ['dp-b', 4],
    ]);
    // Retried at the same time from two connections (PostgreSQL): one of them writes.
    const racing = await Promise.all(
      [1, 2].map(() =>
        writeDecisionCounts(t.db, 'dp-b', report, { reportId: `${id}-3`, now: NOW }),
      ),
    );
    expect(racing.sort()).toEqual([false, true]);
    expect(await count()).toEqual([
      ['dp-a', 12],
      ['dp-b', 8],
    ]);
  });

  it('prunes rows and report ids older than 24 hours on a write', async () => {
    const later = new Date(NOW.getTime() + 24 * 60 * MINUTE + MINUTE);
    await writeDecisionCounts(t.db, 'dp-a', [], { now: later });
    expect(await t.db.query('select 1 from decision_counts')).toEqual([]);
    expect(await t.db.query('select 1 from decision_reports')).toEqual([]);
    // A report retried after that holds only minutes the retention drops: nothing is added twice.
    const id = 'f3b1c2d4-0000-4000-8000-000000000001';
    expect(
      await writeDecisionCounts(t.db, 'dp-a', [row({ count: 4 })], { reportId: id, now: later }),
    ).toBe(true);
    expect(await t.db.query('select 1 from decision_counts')).toEqual([]);
  });
});
