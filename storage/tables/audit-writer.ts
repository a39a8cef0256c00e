// Durable audit appends with group commit. Appends queue up; one flush at a time takes what is
// queued (at most `maxBatch` entries) and writes it in ONE transaction, so many concurrent
// requests share one commit instead of paying a round trip each. A flush starts in the turn after
// the first append, and the next one as soon as the previous one ends: no timer adds latency, and
// while a flush runs new appends accumulate for the next.
//
// A flush is ONE round trip when this writer knows the tenants' heads (it committed their last
// entries): it chains the batch from those heads and calls `audit_append_batch` (a function of
// the migrations), which writes it only if the heads are unchanged. Otherwise (first batch of a
// tenant, another process appended, a caller-given id exists, an unknown tenant) the flush takes
// the transactional path below, which reads the heads under lock.
//
// Invariants:
// - an append's promise resolves only after the transaction holding its entry committed; when the
//   transaction fails, every promise of the batch rejects (AUDIT_WRITE_FAILED) and nothing of it
//   is written;
// - an entry that cannot be written (unknown tenant, invalid entry, duplicate id) is rejected on
//   its own and left out of the chain before anything is hashed, so it never fails its batch;
// - a batch is written only while each of its tenants' head rows is locked (`for update`, in
//   tenant id order so two writers never deadlock) and still the head its entries were chained
//   from: appends from several processes sharing one PostgreSQL interleave as whole batches and
//   the chain stays one unbroken line;
// - createdAt = max(now, head.lastCreatedAt) of that same head: timestamps never go backwards
//   within a chain, whatever the clocks of the writers do.
// The genesis prevHash is stored as GENESIS_HASH (the column is NOT NULL and unique per tenant)
// and exported as null. See docs/audit-storage.md.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  type AuditEntry,
  chainEntry,
  GENESIS_HASH,
  type JsonObject,
} from '../../shared/audit/index.js';
import { GatewayError, gatewayError } from '../../shared/errors/index.js';
import type { Database, SqlExecutor } from '../engine/database.js';

export interface AuditAppendInput {
  /** Default: a fresh UUID. */
  readonly id?: string;
  readonly tenantId: string;
  readonly action: string;
  readonly resourceType: string;
  readonly resourceId: string;
  readonly metadata?: JsonObject;
}

export interface AuditFlushInfo {
  /** Entries committed by this flush. */
  readonly entries: number;
  /** Tenants whose chain grew. */
  readonly tenants: number;
  /** Entries of the batch rejected on their own (unknown tenant, invalid, duplicate id). */
  readonly rejected: number;
  /** From taking the batch to the end of the commit. */
  readonly durationMs: number;
}

export interface AuditFlushErrorInfo {
  /** Entries whose promises were rejected. */
  readonly entries: number;
  readonly durationMs: number;
  readonly error: GatewayError<'AUDIT_WRITE_FAILED'>;
}

export interface AuditWriterOptions {
  /**
   * The writing process's name (a data plane's registered name, `local` for `start`), recorded as
   * metadata.writtenBy in every entry, so an auditor can tell which edge decided. It is covered
   * by the entry's seal like every metadata key; a caller's own writtenBy is replaced.
   */
  readonly writtenBy?: string;
  /** Most entries per transaction (default 512). */
  readonly maxBatch?: number;
  /** Clock in epoch milliseconds (default Date.now); tests fake it. */
  readonly now?: () => number;
  /** Metrics hook: called after each committed flush. Must not throw (errors are ignored). */
  readonly onFlush?: (info: AuditFlushInfo) => void;
  /** Metrics hook: called after a flush whose transaction failed. */
  readonly onFlushError?: (info: AuditFlushErrorInfo) => void;
  /**
   * Called after each commit with the entries it made durable (after their appends resolved), in
   * chain order: where the event bus publishes `audit.appended`. Must not throw (ignored).
   */
  readonly onCommitted?: (entries: readonly AuditEntry[]) => void;
}

export interface AuditWriter {
  /** Appends one entry; resolves with the stored entry once it is committed. */
  append(input: AuditAppendInput): Promise<AuditEntry>;
  /** Resolves once every entry appended before the call is committed or rejected. */
  flush(): Promise<void>;
  /** Flushes, then rejects new appends with AUDIT_WRITER_CLOSED. Does not close the database. */
  close(): Promise<void>;
  /** Entries appended and not yet settled. */
  readonly pending: number;
}

export const DEFAULT_AUDIT_BATCH = 512;

export function createAuditWriter(db: Database, options: AuditWriterOptions = {}): AuditWriter {
  return new GroupCommitAuditWriter(db, options);
}

interface QueuedAppend {
  readonly input: AuditAppendInput;
  readonly id: string;
  /** The caller chose the id: it may already exist. */
  readonly givenId: boolean;
  readonly resolve: (entry: AuditEntry) => void;
  readonly reject: (error: unknown) => void;
}

interface ChainHead {
  seq: number;
  hash: string;
  lastCreatedAt: number;
  /** createdAt of this batch's entries, fixed when the head is locked. */
  createdAt: string;
  grew: boolean;
}

interface HeadRow {
  tenantId: string;
  seq: string | number;
  hash: string;
  lastCreatedAt: Date;
}

const ENSURE_HEADS = `
insert into audit_chain_heads ("tenantId", seq, hash, "lastCreatedAt")
select id, 0, $2, to_timestamp(0) from tenants where id = any($1::text[]) order by id
on conflict ("tenantId") do nothing`;

const LOCK_HEADS = `
select "tenantId", seq, hash, "lastCreatedAt" from audit_chain_heads
where "tenantId" = any($1::text[]) order by "tenantId" for update`;

const EXISTING_IDS = 'select id from audit_entries where id = any($1::text[])';

// One statement writes the batch (one JSON parameter, unpacked with jsonb_to_recordset) and moves
// the heads, iff every head is still the one the batch was chained from.
const APPEND_BATCH = 'select audit_append_batch($1::jsonb, $2::jsonb, $3::text[]) as written';

class GroupCommitAuditWriter implements AuditWriter {
  private readonly db: Database;
  private readonly maxBatch: number;
  private readonly now: () => number;
  private readonly onFlush: ((info: AuditFlushInfo) => void) | null;
  private readonly onFlushError: ((info: AuditFlushErrorInfo) => void) | null;
  private readonly onCommitted: ((entries: readonly AuditEntry[]) => void) | null;
  private readonly writtenBy: string | null;
  private queue: QueuedAppend[] = [];
  private running = false;
  private closed = false;
  private appended = 0;
  private settled = 0;
  private waiters: { target: number; resolve: () => void }[] = [];
  /** Tenants whose head row is known to exist: their batches skip the insert. */
  private readonly knownHeads = new Set<string>();
  /** The heads this writer committed last, per tenant: where its next batch continues. */
  private readonly committedHeads = new Map<string, CommittedHead>();

  constructor(db: Database, options: AuditWriterOptions) {
    const maxBatch = options.maxBatch ?? DEFAULT_AUDIT_BATCH;
    if (!Number.isInteger(maxBatch) || maxBatch < 1) {
      throw new RangeError('createAuditWriter: maxBatch must be a positive integer');
    }
    this.db = db;
    this.maxBatch = maxBatch;
    this.now = options.now ?? Date.now;
    this.onFlush = options.onFlush ?? null;
    this.onFlushError = options.onFlushError ?? null;
    this.onCommitted = options.onCommitted ?? null;
    this.writtenBy = options.writtenBy ?? null;
  }

  get pending(): number {
    return this.appended - this.settled;
  }

  append(given: AuditAppendInput): Promise<AuditEntry> {
    if (this.closed) {
      return Promise.reject(gatewayError('AUDIT_WRITER_CLOSED'));
    }
    const input =
      this.writtenBy === null
        ? given
        : { ...given, metadata: { ...given.metadata, writtenBy: this.writtenBy } };
    const problem = checkStorable(input);
    if (problem !== null) {
      return Promise.reject(gatewayError('AUDIT_ENTRY_INVALID', { problem }));
    }
    return new Promise<AuditEntry>((resolve, reject) => {
      const givenId = input.id !== undefined;
      this.queue.push({ input, id: input.id ?? randomUUID(), givenId, resolve, reject });
      this.appended++;
      if (!this.running) {
        this.running = true;
        // setImmediate, not a microtask: requests whose bytes have already arrived are parsed in
        // this turn of the event loop, and their appends join the batch.
        setImmediate(() => void this.run());
      }
    });
  }

  flush(): Promise<void> {
    if (this.settled === this.appended) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ target: this.appended, resolve }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private async run(): Promise<void> {
    while (this.queue.length > 0) {
      const batch =
        this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
      this.queue = batch === this.queue ? [] : this.queue.slice(this.maxBatch);
      await this.writeBatch(batch);
      this.settled += batch.length;
      if (this.waiters.length > 0) {
        const ready = this.waiters.filter((w) => w.target <= this.settled);
        this.waiters = this.waiters.filter((w) => w.target > this.settled);
        for (const waiter of ready) waiter.resolve();
      }
    }
    this.running = false;
  }

  /** Settles every promise of the batch; never throws. */
  private async writeBatch(batch: QueuedAppend[]): Promise<void> {
    const started = performance.now();
    let outcome: BatchOutcome;
    try {
      outcome =
        (await this.appendInOneRoundTrip(batch)) ??
        (await this.db.transaction((tx) => this.commitBatch(tx, batch)));
    } catch (cause) {
      // The outcome may be unknown (a dropped connection during commit): read the heads again.
      for (const item of batch) this.committedHeads.delete(item.input.tenantId);
      const error = gatewayError(
        'AUDIT_WRITE_FAILED',
        { count: batch.length, location: this.db.location, reason: describeError(cause) },
        { cause },
      );
      for (const item of batch) item.reject(error);
      report(this.onFlushError, {
        entries: batch.length,
        durationMs: performance.now() - started,
        error,
      });
      return;
    }
    for (const tenantId of outcome.lockedTenants) this.knownHeads.add(tenantId);
    for (const [tenantId, head] of outcome.heads) this.committedHeads.set(tenantId, head);
    let rejected = 0;
    const committed: AuditEntry[] | null = this.onCommitted === null ? null : [];
    for (let i = 0; i < batch.length; i++) {
      const result = outcome.results[i]!;
      if (result instanceof GatewayError) {
        rejected++;
        batch[i]!.reject(result);
      } else {
        batch[i]!.resolve(result);
        committed?.push(result);
      }
    }
    if (committed !== null && committed.length > 0) report(this.onCommitted, committed);
    report(this.onFlush, {
      entries: batch.length - rejected,
      tenants: outcome.grownTenants,
      rejected,
      durationMs: performance.now() - started,
    });
  }

  private async commitBatch(
    tx: SqlExecutor,
    batch: readonly QueuedAppend[],
  ): Promise<BatchOutcome> {
    const tenantIds = [...new Set(batch.map((item) => item.input.tenantId))].sort();
    const fresh = tenantIds.filter((id) => !this.knownHeads.has(id));
    if (fresh.length > 0) await tx.query(ENSURE_HEADS, [fresh, GENESIS_HASH]);
    const now = this.now();
    const heads = new Map<string, ChainHead>();
    for (const row of await tx.query<HeadRow>(LOCK_HEADS, [tenantIds])) {
      const lastCreatedAt = row.lastCreatedAt.getTime();
      heads.set(row.tenantId, {
        seq: Number(row.seq),
        hash: row.hash,
        lastCreatedAt,
        createdAt: new Date(Math.max(now, lastCreatedAt)).toISOString(),
        grew: false,
      });
    }
    for (const id of tenantIds) if (!heads.has(id)) this.knownHeads.delete(id);

    const givenIds = batch.filter((item) => item.givenId).map((item) => item.id);
    const taken = new Set<string>();
    if (givenIds.length > 0) {
      for (const row of await tx.query<{ id: string }>(EXISTING_IDS, [givenIds])) taken.add(row.id);
    }
    const chained = chainBatch(batch, heads, taken);
    if (chained.rows.length > 0) {
      // The heads are locked by this transaction, so they cannot have moved.
      const [result] = await tx.query<{ written: boolean }>(APPEND_BATCH, [
        JSON.stringify(chained.rows),
        JSON.stringify(chained.heads),
        [],
      ]);
      if (result?.written !== true) throw new Error('the locked chain heads changed');
    }
    return {
      results: chained.results,
      lockedTenants: [...heads.keys()],
      grownTenants: chained.heads.length,
      heads: committedHeadsOf(heads),
    };
  }

  /**
   * Chains the batch from the heads this writer committed and writes it with one statement.
   * Null when it cannot (a head unknown here) or did not (a head moved, a given id exists): the
   * caller then takes the transactional path, which finds out why.
   */
  private async appendInOneRoundTrip(batch: readonly QueuedAppend[]): Promise<BatchOutcome | null> {
    for (const item of batch) if (!this.committedHeads.has(item.input.tenantId)) return null;
    const now = this.now();
    const heads = new Map<string, ChainHead>();
    for (const item of batch) {
      const tenantId = item.input.tenantId;
      if (heads.has(tenantId)) continue;
      const committed = this.committedHeads.get(tenantId)!;
      heads.set(tenantId, {
        ...committed,
        createdAt: new Date(Math.max(now, committed.lastCreatedAt)).toISOString(),
        grew: false,
      });
    }
    const chained = chainBatch(batch, heads, new Set());
    if (chained.rows.length > 0) {
      const givenIds = batch.filter((item) => item.givenId).map((item) => item.id);
      const [result] = await this.db.query<{ written: boolean }>(APPEND_BATCH, [
        JSON.stringify(chained.rows),
        JSON.stringify(chained.heads),
        givenIds,
      ]);
      if (result?.written !== true) return null;
    }
    return {
      results: chained.results,
      lockedTenants: [],
      grownTenants: chained.heads.length,
      heads: committedHeadsOf(heads),
    };
  }
}

interface CommittedHead {
  readonly seq: number;
  readonly hash: string;
  readonly lastCreatedAt: number;
}

interface HeadMove {
  readonly tenantId: string;
  /** The head the batch was chained from: it must still be current when the batch is written. */
  readonly fromSeq: number;
  readonly fromHash: string;
  readonly seq: number;
  readonly hash: string;
  readonly lastCreatedAt: string;
}

interface ChainedBatch {
  readonly results: (AuditEntry | GatewayError)[];
  readonly rows: StoredRow[];
  /** One per tenant whose chain grew. */
  readonly heads: HeadMove[];
}

/**
 * Builds the batch's entries in queue order, each tenant's continuing from its head (advanced in
 * place). Entries that cannot be written get their error instead and are left out of the chain.
 */
function chainBatch(
  batch: readonly QueuedAppend[],
  heads: Map<string, ChainHead>,
  taken: Set<string>,
): ChainedBatch {
  const starts = new Map<string, { seq: number; hash: string }>();
  for (const [tenantId, head] of heads) starts.set(tenantId, { seq: head.seq, hash: head.hash });
  const results: (AuditEntry | GatewayError)[] = new Array(batch.length);
  const rows: StoredRow[] = [];
  for (let i = 0; i < batch.length; i++) {
    const { input, id } = batch[i]!;
    const head = heads.get(input.tenantId);
    if (head === undefined) {
      results[i] = gatewayError('AUDIT_TENANT_UNKNOWN', {
        lookup: 'id',
        tenant: JSON.stringify(input.tenantId),
      });
      continue;
    }
    if (taken.has(id)) {
      results[i] = gatewayError('AUDIT_ENTRY_DUPLICATE', { entryId: JSON.stringify(id) });
      continue;
    }
    let entry: AuditEntry;
    try {
      entry = chainEntry(
        {
          id,
          tenantId: input.tenantId,
          action: input.action,
          resourceType: input.resourceType,
          resourceId: input.resourceId,
          createdAt: head.createdAt,
          ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
        },
        head.hash,
      );
    } catch (error) {
      results[i] = gatewayError(
        'AUDIT_ENTRY_INVALID',
        { problem: describeError(error) },
        { cause: error },
      );
      continue;
    }
    taken.add(id);
    head.seq++;
    head.hash = entry.hash;
    head.grew = true;
    rows.push({
      id,
      tenantId: entry.tenantId,
      seq: head.seq,
      action: entry.action,
      resourceType: entry.resourceType,
      resourceId: entry.resourceId,
      metadata: entry.metadata,
      after: entry.after ?? null,
      createdAt: entry.createdAt,
      hash: entry.hash,
      prevHash: entry.prevHash ?? GENESIS_HASH,
    });
    results[i] = entry;
  }
  const moves: HeadMove[] = [];
  for (const [tenantId, head] of heads) {
    if (!head.grew) continue;
    const start = starts.get(tenantId)!;
    moves.push({
      tenantId,
      fromSeq: start.seq,
      fromHash: start.hash,
      seq: head.seq,
      hash: head.hash,
      lastCreatedAt: head.createdAt,
    });
  }
  return { results, rows, heads: moves };
}

/** The heads as they stand after the batch (createdAt of a grown chain is its new newest). */
function committedHeadsOf(heads: ReadonlyMap<string, ChainHead>): Map<string, CommittedHead> {
  const committed = new Map<string, CommittedHead>();
  for (const [tenantId, head] of heads) {
    committed.set(tenantId, {
      seq: head.seq,
      hash: head.hash,
      lastCreatedAt: head.grew ? Date.parse(head.createdAt) : head.lastCreatedAt,
    });
  }
  return committed;
}

interface BatchOutcome {
  readonly results: readonly (AuditEntry | GatewayError)[];
  readonly lockedTenants: readonly string[];
  readonly grownTenants: number;
  /** Every head of the batch's tenants as committed. */
  readonly heads: ReadonlyMap<string, CommittedHead>;
}

interface StoredRow {
  readonly id: string;
  readonly tenantId: string;
  readonly seq: number;
  readonly action: string;
  readonly resourceType: string;
  readonly resourceId: string;
  readonly metadata: JsonObject | null;
  readonly after: string | null;
  readonly createdAt: string;
  readonly hash: string;
  readonly prevHash: string;
}

// Text PostgreSQL cannot store exactly: NUL (rejected by text and jsonb) and unpaired UTF-16
// surrogates (replaced when encoded to UTF-8, which would change a hashed string after the fact).
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MAX_METADATA_DEPTH = 64;

/** Why the entry cannot be stored exactly as given, or null. Cheap: runs on every append. */
function checkStorable(input: AuditAppendInput): string | null {
  if (input === null || typeof input !== 'object') return 'the entry is not an object';
  const required = ['tenantId', 'action', 'resourceType'] as const;
  for (const field of required) {
    const value = input[field];
    if (typeof value !== 'string' || value === '') return `${field} must be a non-empty string`;
    if (UNSTORABLE.test(value)) return `${field} contains NUL or an unpaired surrogate`;
  }
  if (typeof input.resourceId !== 'string') return 'resourceId must be a string';
  if (UNSTORABLE.test(input.resourceId)) {
    return 'resourceId contains NUL or an unpaired surrogate';
  }
  if (input.id !== undefined) {
    if (typeof input.id !== 'string' || input.id === '') return 'id must be a non-empty string';
    if (UNSTORABLE.test(input.id)) return 'id contains NUL or an unpaired surrogate';
  }
  if (input.metadata !== undefined) {
    const metadata: unknown = input.metadata;
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
      return 'metadata must be a JSON object';
    }
    return checkJson(metadata, 0);
  }
  return null;
}

function checkJson(value: unknown, depth: number): string | null {
  if (typeof value === 'string') {
    return UNSTORABLE.test(value) ? 'metadata contains NUL or an unpaired surrogate' : null;
  }
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_METADATA_DEPTH) return `metadata nests deeper than ${MAX_METADATA_DEPTH} levels`;
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = checkJson(item, depth + 1);
      if (problem !== null) return problem;
    }
    return null;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    return 'metadata must hold only plain objects, arrays and JSON values';
  }
  for (const key of Object.keys(value)) {
    if (UNSTORABLE.test(key)) return 'a metadata key contains NUL or an unpaired surrogate';
    const problem = checkJson((value as Record<string, unknown>)[key], depth + 1);
    if (problem !== null) return problem;
  }
  return null;
}

function report<T>(hook: ((info: T) => void) | null, info: T): void {
  if (hook === null) return;
  try {
    hook(info);
  } catch {
    // A metrics hook must never break the audit trail.
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
