// Writes the in-process data plane's decision tally to decision_counts (role `all`: `agent-gateway
// start`): every 5 s on an unref'd timer, on demand before a decisionStats query, and once more
// on stop. Writes run one after another, so a flush that returns has written every decision
// counted before it was called. A failed write is tried again, unchanged and under its report id,
// before anything newer (decision-reports.ts): a commit whose answer was lost is not counted
// twice. A remote data plane reports over the config stream instead (remote/client.ts).
import type { Logger } from 'pino';
import type { Database } from '../../storage/engine/database.js';
import { writeDecisionCounts } from '../../storage/tables/decision-counts.js';
import { DecisionReports } from './decision-reports.js';
import type { DecisionTally } from './decision-tally.js';

export interface DecisionCountsWriterOptions {
  readonly db: Database;
  readonly tally: DecisionTally;
  /** The reporter key of the rows (storage/tables/decision-counts.ts `localReporter`). */
  readonly reporter: string;
  readonly logger: Pick<Logger, 'warn'>;
  /** Default 5000. */
  readonly intervalMs?: number;
}

export class DecisionCountsWriter {
  readonly #options: DecisionCountsWriterOptions;
  #last: Promise<void> = Promise.resolve();
  readonly #reports: DecisionReports;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: DecisionCountsWriterOptions) {
    this.#options = options;
    this.#reports = new DecisionReports(options.tally);
  }

  /** Starts the periodic writes (once the database is migrated). */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.flush(), this.#options.intervalMs ?? 5000);
    this.#timer.unref();
  }

  /** Writes what was counted so far; never rejects (a failure is logged, the rows kept). */
  flush(): Promise<void> {
    const run = this.#last.then(() => this.#write());
    this.#last = run;
    return run;
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /** The unwritten report first, then what the tally holds; stops at a failure. */
  async #write(): Promise<void> {
    const { db, reporter } = this.#options;
    for (;;) {
      const report = this.#reports.next();
      if (report === undefined) return;
      try {
        await writeDecisionCounts(db, reporter, report.rows, { reportId: report.id });
        this.#reports.settle(report, true);
      } catch (error) {
        this.#reports.settle(report, false);
        this.#options.logger.warn(
          { err: error, rows: report.rows.length },
          'decision counts not written; kept for the next write',
        );
        return;
      }
    }
  }
}
