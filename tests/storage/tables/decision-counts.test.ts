// decision_counts on both databases: a report adds to its rows (duplicates within one report
// summed), rows of unknown tenants are dropped, rows older than 24 h are pruned by a write, and a
// read is aggregated over reporters inside one tenant only.
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
    await writeDecisionCounts(t.db, 'dp-a', [row({ count: 2 }), row({ ...deny, count: 1 })], NOW);
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
      NOW,
    );
    await writeDecisionCounts(
      t.db,
      localReporter('local'),
      [
        row({ minute: AT - MINUTE, outcome: 'require_human_approval', reasonCode: 'HOLD' }),
        row({ tenantId: other, count: 7 }),
        row({ tenantId: 'no-such-tenant', count: 9 }),
      ],
      new Date(NOW.getTime() + 1000),
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

  it('prunes rows older than 24 hours on a write', async () => {
    const later = new Date(NOW.getTime() + 24 * 60 * MINUTE + MINUTE);
    await writeDecisionCounts(t.db, 'dp-a', [], later);
    const left = await t.db.query('select 1 from decision_counts');
    expect(left).toEqual([]);
  });
});
