// The data plane's own count of its decisions, per tenant and minute (decisionStats in GraphQL,
// docs/graphql.md). Fed where every decision leaves the pipeline (governance/exchange.ts
// `sendAnswer`, beside the /metrics histogram), drained by whoever reports it: the in-process
// writer of `start`, or the config stream client with each heartbeat.
//
// Invariants: an allow costs two Map lookups and an increment, no allocation once its
// tenant-minute exists. Memory is bounded: a tenant-minute holds at most `maxKeysPerTenantMinute`
// distinct deny/hold rows (later tools count under toolName `(other)`, reason codes being a closed
// set), and at most `maxRows` rows are kept in all (restored reports included): the oldest minutes
// go first.
import {
  DECISION_RETENTION_MS,
  type DecisionCountRow,
  type DecisionOutcome,
  MAX_DECISION_NAME_LENGTH,
  OTHER_TOOL,
} from '../../shared/decisions/decision-counts.js';

export interface DecisionTallyOptions {
  /** Distinct deny/hold rows per tenant and minute before tools count as `(other)`. Default 200. */
  readonly maxKeysPerTenantMinute?: number;
  /** Rows kept in all before the oldest minutes are dropped. Default 50000. */
  readonly maxRows?: number;
  /** The clock (tests). */
  readonly now?: () => number;
}

interface TenantMinute {
  allow: number;
  /** `outcome \0 serverId \0 toolName \0 reasonCode` → count. */
  readonly rows: Map<string, number>;
}

const SEP = '\u0000';

export class DecisionTally {
  readonly #maxKeys: number;
  readonly #maxRows: number;
  readonly #now: () => number;
  /** Minute (epoch ms) → tenant id → counts. */
  #minutes = new Map<number, Map<string, TenantMinute>>();
  #currentMinute = -1;
  #current: Map<string, TenantMinute> | undefined;
  #rows = 0;

  constructor(options: DecisionTallyOptions = {}) {
    this.#maxKeys = options.maxKeysPerTenantMinute ?? 200;
    this.#maxRows = options.maxRows ?? 50_000;
    this.#now = options.now ?? Date.now;
  }

  /** Rows held (allow counters included). */
  get size(): number {
    return this.#rows;
  }

  /** Counts one decision of `tenantId` now. */
  count(
    tenantId: string,
    outcome: DecisionOutcome,
    serverId: string | undefined,
    toolName: string | undefined,
    reasonCode: string | null,
  ): void {
    const time = this.#now();
    const minute = time - (time % 60_000);
    let tenants = this.#current;
    if (minute !== this.#currentMinute || tenants === undefined) {
      tenants = this.#minuteBucket(minute);
      this.#currentMinute = minute;
      this.#current = tenants;
    }
    const counts = tenantCounts(tenants, tenantId);
    if (outcome === 'allow') {
      if (counts.allow++ === 0) this.#grew();
      return;
    }
    const server = outcome === 'deny' ? clip(serverId) : '';
    const tool = outcome === 'deny' ? clip(toolName) : '';
    this.#addRow(counts, outcome, server, tool, reasonCode ?? '', 1);
  }

  /** Every count held, oldest minute first; the tally is empty afterwards. */
  drain(): DecisionCountRow[] {
    const out: DecisionCountRow[] = [];
    const minutes = [...this.#minutes.keys()].sort((a, b) => a - b);
    for (const minute of minutes) {
      for (const [tenantId, counts] of this.#minutes.get(minute)!) {
        if (counts.allow > 0) {
          out.push({
            tenantId,
            minute,
            outcome: 'allow',
            serverId: '',
            toolName: '',
            reasonCode: '',
            count: counts.allow,
          });
        }
        for (const [key, count] of counts.rows) {
          const [outcome, serverId, toolName, reasonCode] = key.split(SEP) as [
            DecisionOutcome,
            string,
            string,
            string,
          ];
          out.push({ tenantId, minute, outcome, serverId, toolName, reasonCode, count });
        }
      }
    }
    this.#minutes = new Map();
    this.#current = undefined;
    this.#currentMinute = -1;
    this.#rows = 0;
    return out;
  }

  /**
   * Puts back rows a report could not deliver, to go with the next one. Rows older than the
   * retention are dropped (the writers would prune them); the row bound still holds.
   */
  restore(rows: readonly DecisionCountRow[]): void {
    const oldest = this.#now() - DECISION_RETENTION_MS;
    for (const row of rows) {
      if (row.minute < oldest) continue;
      const counts = tenantCounts(this.#minuteBucket(row.minute), row.tenantId);
      if (row.outcome === 'allow') {
        const before = counts.allow;
        counts.allow += row.count;
        if (before === 0) this.#grew();
      } else {
        this.#addRow(counts, row.outcome, row.serverId, row.toolName, row.reasonCode, row.count);
      }
    }
    this.#trim();
  }

  #minuteBucket(minute: number): Map<string, TenantMinute> {
    let tenants = this.#minutes.get(minute);
    if (tenants === undefined) {
      tenants = new Map();
      this.#minutes.set(minute, tenants);
    }
    return tenants;
  }

  #addRow(
    counts: TenantMinute,
    outcome: DecisionOutcome,
    serverId: string,
    toolName: string,
    reasonCode: string,
    n: number,
  ): void {
    let key = `${outcome}${SEP}${serverId}${SEP}${toolName}${SEP}${reasonCode}`;
    let count = counts.rows.get(key);
    if (count === undefined && counts.rows.size >= this.#maxKeys) {
      key = `${outcome}${SEP}${SEP}${OTHER_TOOL}${SEP}${reasonCode}`;
      count = counts.rows.get(key);
    }
    counts.rows.set(key, (count ?? 0) + n);
    if (count === undefined) this.#grew();
  }

  /** Notes a new row (after counting it: trimming may drop its minute). */
  #grew(): void {
    this.#rows++;
    if (this.#rows > this.#maxRows) this.#trim();
  }

  /** Drops the oldest minutes until the row bound holds again. */
  #trim(): void {
    if (this.#rows <= this.#maxRows) return;
    const minutes = [...this.#minutes.keys()].sort((a, b) => a - b);
    for (const minute of minutes) {
      if (this.#rows <= this.#maxRows) break;
      for (const counts of this.#minutes.get(minute)!.values()) {
        this.#rows -= counts.rows.size + (counts.allow > 0 ? 1 : 0);
      }
      this.#minutes.delete(minute);
      if (minute === this.#currentMinute) {
        this.#current = undefined;
        this.#currentMinute = -1;
      }
    }
  }
}

/** The tenant's counts in a minute, made on first use. */
function tenantCounts(tenants: Map<string, TenantMinute>, tenantId: string): TenantMinute {
  let counts = tenants.get(tenantId);
  if (counts === undefined) {
    counts = { allow: 0, rows: new Map() };
    tenants.set(tenantId, counts);
  }
  return counts;
}

/** A name as counted: at most MAX_DECISION_NAME_LENGTH characters, empty when unknown. */
function clip(name: string | undefined): string {
  if (name === undefined) return '';
  return name.length > MAX_DECISION_NAME_LENGTH ? name.slice(0, MAX_DECISION_NAME_LENGTH) : name;
}
