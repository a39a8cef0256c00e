// The in-process data plane's decision writer (`start`), on both databases: a write that fails
// keeps its report and writes it, unchanged and once, before what was counted after it; a flush
// that returns has written everything counted before it was called.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DecisionCountsWriter } from '../../../data-plane/metrics/decision-counts-writer.js';
import { DecisionTally } from '../../../data-plane/metrics/decision-tally.js';
import { localReporter } from '../../../storage/tables/decision-counts.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../../support/databases.js';

describeEachDatabase('decision counts writer', (kind) => {
  let t: TestDatabase;
  let tenantId: string;

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    tenantId = (await t.db.prisma.tenant.create({ data: { id: randomUUID(), name: 'counted' } }))
      .id;
  });
  afterAll(() => t?.dispose());

  it('keeps a failed write and writes it once, before newer counts', async () => {
    const tally = new DecisionTally();
    const warnings: string[] = [];
    const writer = new DecisionCountsWriter({
      db: t.db,
      tally,
      reporter: localReporter('writer'),
      logger: { warn: (_details: unknown, message: string) => warnings.push(message) } as never,
    });
    const counts = async () =>
      (
        await t.db.query<{ outcome: string; count: number }>(
          `select outcome, count from decision_counts where "tenantId" = $1 order by outcome`,
          [tenantId],
        )
      ).map((row) => [row.outcome, row.count]);

    tally.count(tenantId, 'allow', 'files', 'read', null);
    tally.count(tenantId, 'deny', 'files', 'drop', 'R1');
    // The database refuses the write: nothing is written, the report is kept.
    await t.db.query('alter table decision_reports rename to decision_reports_away');
    try {
      await writer.flush();
    } finally {
      await t.db.query('alter table decision_reports_away rename to decision_reports');
    }
    expect(warnings).toEqual(['decision counts not written; kept for the next write']);
    expect(await counts()).toEqual([]);
    expect(tally.size).toBe(0);

    tally.count(tenantId, 'allow', 'files', 'read', null);
    await writer.flush();
    expect(await counts()).toEqual([
      ['allow', 2],
      ['deny', 1],
    ]);
    // Two reports: the kept one, then the newer counts.
    expect(await t.db.query('select 1 from decision_reports')).toHaveLength(2);
    await writer.stop();
    expect(await counts()).toEqual([
      ['allow', 2],
      ['deny', 1],
    ]);
  });
});
