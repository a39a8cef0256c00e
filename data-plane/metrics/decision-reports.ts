// The next decision report to deliver, for both reporters of a data plane's tally (the in-process
// writer of `start` and the config stream client): the report not yet confirmed, unchanged and
// under its id, else a new one drained from the tally. A report that failed may have been written
// all the same (its answer was lost), so it is never merged back into the tally: the control
// plane writes an id once (storage/tables/decision-counts.ts), and counts are neither lost nor
// doubled. Newer counts wait in the tally, which bounds what it keeps.
import { randomUUID } from 'node:crypto';
import type { DecisionCountRow } from '../../shared/decisions/decision-counts.js';
import type { DecisionTally } from './decision-tally.js';

export interface DecisionReportBatch {
  readonly id: string;
  readonly rows: readonly DecisionCountRow[];
}

export class DecisionReports {
  readonly #tally: Pick<DecisionTally, 'size' | 'drain' | 'restore'>;
  readonly #maxRows: number;
  #unconfirmed: DecisionReportBatch | undefined;

  /** `maxRows`: what one report may carry; the rest stays in the tally for the next one. */
  constructor(tally: Pick<DecisionTally, 'size' | 'drain' | 'restore'>, maxRows = Infinity) {
    this.#tally = tally;
    this.#maxRows = maxRows;
  }

  /** The unconfirmed report, else the tally's counts as a new one; undefined when none. */
  next(): DecisionReportBatch | undefined {
    if (this.#unconfirmed !== undefined) return this.#unconfirmed;
    if (this.#tally.size === 0) return undefined;
    const rows = this.#tally.drain();
    if (rows.length > this.#maxRows) this.#tally.restore(rows.splice(this.#maxRows));
    return { id: randomUUID(), rows };
  }

  /** Records how `report` ended: confirmed (written, or never will be), else sent again next. */
  settle(report: DecisionReportBatch, confirmed: boolean): void {
    this.#unconfirmed = confirmed ? undefined : report;
  }
}
