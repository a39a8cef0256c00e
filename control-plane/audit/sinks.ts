// Checkpoint sinks (docs/audit.md, "Sinks"): every signed checkpoint leaves the gateway, in order,
// to places its database's owner does not control. A checkpoint that lives only in the database
// anchors nothing against whoever controls the database.
//
// One loop per sink reads the checkpoints after the sink's progress (audit_sink_progress, in
// (createdAt, id) order) and hands them over one by one. The progress moves after each delivery,
// so after a restart or a failure the sink resumes where it stopped and receives every checkpoint
// exactly in order. A failing sink retries with backoff and delays only its own anchoring:
// nothing here is on the append path, and another sink keeps going.
//
// Checkpoints are read once they are SETTLE_MS old. A checkpoint stored by a transaction that
// started earlier but committed later (two cuts at once on PostgreSQL) is then already visible,
// and never lands behind a sink's progress.
import type { Logger } from 'pino';
import type { WitnessKey } from '../../shared/tlog/index.js';
import type { Database } from '../../storage/engine/database.js';
import type { StoredCheckpoint } from '../../storage/tables/audit-checkpoints.js';

/** Where checkpoints go. `deliver` resolves once the sink holds the checkpoint durably. */
export interface CheckpointSink {
  /** Its progress key and log name: `file:<path>`, `http:<url>`. */
  readonly name: string;
  /** Its kind, the metrics' label: `file`, `http`. */
  readonly kind: string;
  /** A witness's cosignature/v1 key: the cosignatures it adds are checked with it. */
  readonly witnessKey?: WitnessKey;
  deliver(checkpoint: StoredCheckpoint): Promise<void>;
  close?(): Promise<void>;
}

export interface SinkOutcome {
  readonly sink: CheckpointSink;
  /** The checkpoint delivered (ok) or not (failed). */
  readonly checkpoint: StoredCheckpoint;
  readonly ok: boolean;
  /** Checkpoints still waiting after this one. */
  readonly backlog: number;
}

export interface AuditSinkRunnerOptions {
  readonly db: Database;
  readonly sinks: readonly CheckpointSink[];
  readonly logger: Logger;
  /** After each delivery attempt (metrics). Must not throw. */
  readonly onOutcome?: (outcome: SinkOutcome) => void;
  /** What a sink held when its loop began (for gauges that must not wait for a delivery). */
  readonly onResume?: (sink: CheckpointSink, standing: SinkStanding) => void;
  /** Retry backoff bounds (defaults 1 s and 60 s; tests shorten them). */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  /** How often an idle sink looks for new checkpoints without a nudge (default 1 s). */
  readonly idleMs?: number;
}

const SETTLE_MS = 1000;
const BATCH = 100;

interface Cursor {
  createdAt: Date | null;
  id: string | null;
}

interface CheckpointRow extends Omit<StoredCheckpoint, 'treeSize'> {
  readonly treeSize: string | number;
}

export class AuditSinkRunner {
  readonly #options: AuditSinkRunnerOptions;
  readonly #loops: Promise<void>[] = [];
  #wake: (() => void)[] = [];
  #stopped = false;

  constructor(options: AuditSinkRunnerOptions) {
    this.#options = options;
  }

  get sinks(): readonly CheckpointSink[] {
    return this.#options.sinks;
  }

  start(): void {
    for (const sink of this.#options.sinks) this.#loops.push(this.#run(sink));
  }

  /** A checkpoint was cut: sinks look for it (after it settled) instead of at their next tick. */
  nudge(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const resolve of wake) resolve();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.nudge();
    await Promise.all(this.#loops);
    for (const sink of this.#options.sinks) await sink.close?.().catch(() => {});
  }

  /** Waits `ms`, or less when nudged or stopped. */
  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      this.#wake.push(done);
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  async #run(sink: CheckpointSink): Promise<void> {
    const { db, logger } = this.#options;
    const retryMin = this.#options.retryMinMs ?? 1000;
    const retryMax = this.#options.retryMaxMs ?? 60_000;
    let cursor: Cursor | undefined;
    let backoff = retryMin;
    while (!this.#stopped) {
      try {
        if (cursor === undefined) {
          cursor = await readCursor(db, sink.name);
          if (this.#options.onResume) {
            this.#options.onResume(sink, await readStanding(db, cursor));
          }
        }
        const due = await readAfter(db, cursor);
        if (due.length === 0) {
          // Nudged when a checkpoint is cut; it is read once it has settled.
          await this.#pause(this.#options.idleMs ?? 1000);
          if (!this.#stopped) await this.#pause(SETTLE_MS);
          continue;
        }
        for (const [i, checkpoint] of due.entries()) {
          if (this.#stopped) return;
          try {
            await sink.deliver(checkpoint);
          } catch (error) {
            logger.warn(
              { err: error, sink: sink.name, retryInMs: backoff, treeSize: checkpoint.treeSize },
              'audit checkpoint sink failed: retrying',
            );
            this.#options.onOutcome?.({ sink, checkpoint, ok: false, backlog: due.length - i });
            await recordFailure(db, sink.name, error).catch(() => {});
            await this.#pause(backoff);
            backoff = Math.min(retryMax, backoff * 2);
            break;
          }
          backoff = retryMin;
          cursor = { createdAt: checkpoint.createdAt, id: checkpoint.id };
          await saveCursor(db, sink.name, checkpoint);
          this.#options.onOutcome?.({ sink, checkpoint, ok: true, backlog: due.length - i - 1 });
        }
      } catch (error) {
        // The database itself: try again later, from the stored progress.
        logger.error(
          { err: error, sink: sink.name },
          'audit checkpoint sink cannot read its progress',
        );
        cursor = undefined;
        await this.#pause(backoff);
        backoff = Math.min(retryMax, backoff * 2);
      }
    }
  }
}

async function readCursor(db: Database, sink: string): Promise<Cursor> {
  const [row] = await db.query<{ lastCreatedAt: Date | null; lastId: string | null }>(
    'select "lastCreatedAt", "lastId" from audit_sink_progress where sink = $1',
    [sink],
  );
  return { createdAt: row?.lastCreatedAt ?? null, id: row?.lastId ?? null };
}

/** What a sink holds: when its newest checkpoint was cut, and each tenant's largest size. */
export interface SinkStanding {
  readonly lastAnchoredAt: Date | null;
  readonly tenants: readonly { readonly tenantId: string; readonly treeSize: number }[];
}

async function readStanding(db: Database, cursor: Cursor): Promise<SinkStanding> {
  if (cursor.createdAt === null) return { lastAnchoredAt: null, tenants: [] };
  // Per tenant, its sizes from the largest down until one the sink holds: the first, unless
  // checkpoints were cut after the sink stopped.
  const rows = await db.query<{ tenantId: string; treeSize: string | number | null }>(
    `select t.id as "tenantId",
       (select c."treeSize" from audit_checkpoints c
        where c."tenantId" = t.id and (c."createdAt", c.id) <= ($1::timestamptz, $2::text)
        order by c."treeSize" desc limit 1) as "treeSize"
     from tenants t`,
    [cursor.createdAt.toISOString(), cursor.id ?? ''],
  );
  return {
    lastAnchoredAt: cursor.createdAt,
    tenants: rows.flatMap((row) =>
      row.treeSize === null ? [] : [{ tenantId: row.tenantId, treeSize: Number(row.treeSize) }],
    ),
  };
}

async function readAfter(db: Database, cursor: Cursor): Promise<StoredCheckpoint[]> {
  const rows = await db.query<CheckpointRow>(
    `select id, "tenantId", "treeSize", "rootHash", "keyId", note, cosignatures, "createdAt"
     from audit_checkpoints
     where ($1::timestamptz is null or ("createdAt", id) > ($1::timestamptz, $2::text))
       and "createdAt" < now() - make_interval(secs => $3)
     order by "createdAt", id
     limit $4`,
    [cursor.createdAt?.toISOString() ?? null, cursor.id ?? '', SETTLE_MS / 1000, BATCH],
  );
  return rows.map((row) => ({
    ...row,
    treeSize: Number(row.treeSize),
    createdAt: new Date(row.createdAt),
  }));
}

async function saveCursor(db: Database, sink: string, checkpoint: StoredCheckpoint): Promise<void> {
  await db.query(
    `insert into audit_sink_progress (sink, "lastCreatedAt", "lastId", delivered, "updatedAt")
     values ($1, $2, $3, 1, now())
     on conflict (sink) do update set "lastCreatedAt" = excluded."lastCreatedAt",
       "lastId" = excluded."lastId", delivered = audit_sink_progress.delivered + 1,
       "updatedAt" = now(), "lastError" = null, "lastErrorAt" = null`,
    [sink, checkpoint.createdAt.toISOString(), checkpoint.id],
  );
}

/** Keeps a sink's last failure for operators (cleared by its next delivery). */
async function recordFailure(db: Database, sink: string, error: unknown): Promise<void> {
  const reason = (error instanceof Error ? error.message : String(error)).slice(0, 500);
  await db.query(
    `insert into audit_sink_progress (sink, "lastError", "lastErrorAt", "updatedAt")
     values ($1, $2, now(), now())
     on conflict (sink) do update set "lastError" = excluded."lastError",
       "lastErrorAt" = excluded."lastErrorAt", "updatedAt" = now()`,
    [sink, reason],
  );
}

/** A configured sink as operators see it; backlog and anchored size are one tenant's. */
export interface SinkState {
  readonly name: string;
  readonly kind: string;
  readonly delivered: number;
  /** When the newest checkpoint the sink holds (of any tenant) was cut. */
  readonly lastAnchoredAt: Date | null;
  readonly lastError: string | null;
  readonly lastErrorAt: Date | null;
  /** The tenant's checkpoints the sink has not received yet. */
  readonly backlog: number;
  /** The tenant's largest tree size the sink holds, and when that checkpoint was cut. */
  readonly anchoredTreeSize: number | null;
  readonly anchoredAt: Date | null;
}

export async function readSinkStates(
  db: Database,
  sinks: readonly Pick<CheckpointSink, 'name' | 'kind'>[],
  tenantId: string,
): Promise<SinkState[]> {
  const states: SinkState[] = [];
  for (const sink of sinks) {
    const [row] = await db.query<{
      delivered: string | number | null;
      lastCreatedAt: Date | null;
      lastError: string | null;
      lastErrorAt: Date | null;
      backlog: string | number;
      anchoredTreeSize: string | number | null;
      anchoredAt: Date | null;
    }>(
      `select p.delivered, p."lastCreatedAt", p."lastError", p."lastErrorAt",
         (select count(*) from audit_checkpoints c where c."tenantId" = $2
            and (p."lastCreatedAt" is null or (c."createdAt", c.id) > (p."lastCreatedAt", p."lastId"))
         ) as backlog,
         a."treeSize" as "anchoredTreeSize", a."createdAt" as "anchoredAt"
       from (select $1::text as sink) s
       left join audit_sink_progress p on p.sink = s.sink
       left join lateral (
         select c."treeSize", c."createdAt" from audit_checkpoints c
         where c."tenantId" = $2 and p."lastCreatedAt" is not null
           and (c."createdAt", c.id) <= (p."lastCreatedAt", p."lastId")
         order by c."treeSize" desc, c."createdAt" desc limit 1
       ) a on true`,
      [sink.name, tenantId],
    );
    states.push({
      name: sink.name,
      kind: sink.kind,
      delivered: Number(row?.delivered ?? 0),
      lastAnchoredAt: row?.lastCreatedAt ? new Date(row.lastCreatedAt) : null,
      lastError: row?.lastError ?? null,
      lastErrorAt: row?.lastErrorAt ? new Date(row.lastErrorAt) : null,
      backlog: Number(row?.backlog ?? 0),
      anchoredTreeSize:
        row?.anchoredTreeSize === null || row?.anchoredTreeSize === undefined
          ? null
          : Number(row.anchoredTreeSize),
      anchoredAt: row?.anchoredAt ? new Date(row.anchoredAt) : null,
    });
  }
  return states;
}
