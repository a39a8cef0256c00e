// decision_counts: the decisions the data planes counted (shared/decisions/decision-counts.ts),
// written from drained tallies and read, aggregated over a window, by decisionStats.
//
// A write is one transaction: rows of tenants that no longer exist are dropped (a report may
// arrive after a tenant is gone), the rest are added to their counters with one upsert, and rows
// older than the retention (24 h) are pruned. Every read is scoped to one tenant.
//
// A report that names itself (a data plane's `report_id`) is applied once: its id is recorded in
// decision_reports in the same transaction, and a report already recorded adds nothing. A data
// plane whose report's answer was lost sends the same report again, so counts are neither lost
// nor doubled. Ids are pruned with the counts: a report retried after 24 h holds only minutes
// older than the retention, which the write drops anyway.
import {
  CLIENT_ERROR_CODES,
  DECISION_RETENTION_MS,
  type DecisionCountRow,
} from '../../shared/decisions/decision-counts.js';
import type { Database } from '../engine/database.js';

const LOCAL_PREFIX = 'local:';

/** The reporter of the in-process data plane of a `start` process named `name`. */
export function localReporter(name: string): string {
  return `${LOCAL_PREFIX}${name}`;
}

const INT_MAX = 2_147_483_647;

export interface DecisionCountsWrite {
  /** The report's id: a report of this reporter already written under it adds nothing. */
  readonly reportId?: string | undefined;
  /** The time of the write (tests): decides what the retention prunes. */
  readonly now?: Date | undefined;
}

/**
 * Adds `rows` to the counters of `reporter` (a data plane id or `localReporter(...)`); false when
 * the report was written before (its `reportId` is known) and nothing was added.
 */
export async function writeDecisionCounts(
  db: Database,
  reporter: string,
  rows: readonly DecisionCountRow[],
  { reportId, now = new Date() }: DecisionCountsWrite = {},
): Promise<boolean> {
  const oldest = new Date(now.getTime() - DECISION_RETENTION_MS);
  return db.transaction(async (tx) => {
    if (reportId !== undefined) {
      const recorded = await tx.query(
        `insert into decision_reports (reporter, id, "receivedAt") values ($1, $2, $3)
         on conflict do nothing returning 1`,
        [reporter, reportId, now],
      );
      if (recorded.length === 0) return false;
    }
    if (rows.length > 0) {
      const columns = {
        tenantId: [] as string[],
        minute: [] as Date[],
        outcome: [] as string[],
        serverId: [] as string[],
        toolName: [] as string[],
        reasonCode: [] as string[],
        count: [] as number[],
      };
      for (const row of rows) {
        if (row.minute < oldest.getTime()) continue;
        columns.tenantId.push(row.tenantId);
        columns.minute.push(new Date(row.minute));
        columns.outcome.push(row.outcome);
        columns.serverId.push(row.serverId);
        columns.toolName.push(row.toolName);
        columns.reasonCode.push(row.reasonCode);
        columns.count.push(Math.min(row.count, INT_MAX));
      }
      // Rows with the same key in one report are summed first: ON CONFLICT may touch a row once.
      await tx.query(
        `insert into decision_counts
           ("tenantId", reporter, minute, outcome, "serverId", "toolName", "reasonCode", count,
            "reportedAt")
         select r.t, $1, r.m, r.o, r.s, r.n, r.c, least(sum(r.k), ${INT_MAX})::int, $2
           from unnest($3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[],
                       $8::text[], $9::int[]) as r(t, m, o, s, n, c, k)
           join tenants on tenants.id = r.t
          group by r.t, r.m, r.o, r.s, r.n, r.c
         on conflict ("tenantId", reporter, minute, outcome, "serverId", "toolName", "reasonCode")
         do update set count = least(decision_counts.count::bigint + excluded.count, ${INT_MAX}),
                       "reportedAt" = excluded."reportedAt"`,
        [
          reporter,
          now,
          columns.tenantId,
          columns.minute,
          columns.outcome,
          columns.serverId,
          columns.toolName,
          columns.reasonCode,
          columns.count,
        ],
      );
    }
    await tx.query('delete from decision_counts where minute < $1', [oldest]);
    await tx.query('delete from decision_reports where "receivedAt" < $1', [oldest]);
    return true;
  });
}

export interface DecisionWindowCounts {
  /**
   * Per minute and outcome, oldest minute first; `clientErrors` counts the denies among them
   * whose reason code is a client error (CLIENT_ERROR_CODES), 0 for other outcomes.
   */
  readonly perMinute: readonly {
    minute: Date;
    outcome: string;
    count: number;
    clientErrors: number;
  }[];
  /** Denied tools, count desc, at most `limit`. */
  readonly topDeniedTools: readonly { serverId: string; toolName: string; count: number }[];
  /** Reason codes of denies and holds, count desc, at most `limit`. */
  readonly topReasonCodes: readonly { reasonCode: string; count: number }[];
  /**
   * Who reported in the window, most recent first: `dataPlaneId` null for an in-process data
   * plane (`name` is then its process name), else the registered data plane and its name.
   */
  readonly reporters: readonly {
    reporter: string;
    dataPlaneId: string | null;
    name: string;
    lastReportedAt: Date;
  }[];
}

/** The tenant's counts of minutes at or after `since`, aggregated over every reporter. */
export async function readDecisionCounts(
  db: Database,
  tenantId: string,
  since: Date,
  limit = 10,
): Promise<DecisionWindowCounts> {
  const where = `"tenantId" = $1 and minute >= $2`;
  const [perMinute, tools, reasons, reporters] = await Promise.all([
    db.query<{ minute: Date; outcome: string; count: string; clientErrors: string | null }>(
      `select minute, outcome, sum(count) as count,
              sum(count) filter (where outcome = 'deny' and "reasonCode" = any($3::text[]))
                as "clientErrors"
         from decision_counts where ${where}
        group by minute, outcome order by minute, outcome`,
      [tenantId, since, CLIENT_ERROR_CODES],
    ),
    db.query<{ serverId: string; toolName: string; count: string }>(
      `select "serverId", "toolName", sum(count) as count from decision_counts
        where ${where} and outcome = 'deny' and "toolName" <> ''
        group by "serverId", "toolName" order by sum(count) desc, "serverId", "toolName" limit $3`,
      [tenantId, since, limit],
    ),
    db.query<{ reasonCode: string; count: string }>(
      `select "reasonCode", sum(count) as count from decision_counts
        where ${where} and outcome <> 'allow' and "reasonCode" <> ''
        group by "reasonCode" order by sum(count) desc, "reasonCode" limit $3`,
      [tenantId, since, limit],
    ),
    db.query<{ reporter: string; name: string | null; lastReportedAt: Date }>(
      `select c.reporter, d.name, max(c."reportedAt") as "lastReportedAt"
         from decision_counts c left join data_planes d on d.id = c.reporter
        where c."tenantId" = $1 and c.minute >= $2
        group by c.reporter, d.name order by max(c."reportedAt") desc, c.reporter`,
      [tenantId, since],
    ),
  ]);
  return {
    perMinute: perMinute.map((row) => ({
      minute: new Date(row.minute),
      outcome: row.outcome,
      count: Number(row.count),
      clientErrors: Number(row.clientErrors ?? 0),
    })),
    topDeniedTools: tools.map((row) => ({
      serverId: row.serverId,
      toolName: row.toolName,
      count: Number(row.count),
    })),
    topReasonCodes: reasons.map((row) => ({
      reasonCode: row.reasonCode,
      count: Number(row.count),
    })),
    reporters: reporters.map((row) => {
      const local = row.reporter.startsWith(LOCAL_PREFIX);
      return {
        reporter: row.reporter,
        dataPlaneId: local ? null : row.reporter,
        name: row.name ?? (local ? row.reporter.slice(LOCAL_PREFIX.length) : row.reporter),
        lastReportedAt: new Date(row.lastReportedAt),
      };
    }),
  };
}
