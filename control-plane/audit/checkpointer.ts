// Cuts each tenant's signed audit checkpoints (docs/audit.md, "Checkpoints"): it grows the
// tenant's Merkle tree over the entries appended since (storage/tables/audit-tree.ts), signs the
// C2SP checkpoint of that size with the audit key, and stores the signed note. A checkpoint is
// cut when `entries` entries were appended since the last one, when `seconds` passed with at
// least one new entry, when a tenant has none yet (a new tenant gets one at once), when the
// audit key was rotated, and on demand (`cut`).
//
// It runs only where the master key is (the control plane, or `start`): data planes append and
// never sign. Appends never wait for it: a control plane follows `audit.appended` events (every
// process's, over LISTEN/NOTIFY on PostgreSQL) to count; `start` counts what its own writer
// commits, and grows the tree from those entries without reading them back; and a sweep every
// few seconds reads where every tenant stands, which also covers events lost while a connection
// was down and appends of other processes. Cuts of one tenant run one
// at a time; two control planes cutting the same tenant agree (the tree grows under a row lock,
// a checkpoint is stored once per size and key).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditEntry } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import { EVENT_TYPES, type EventBus, followEvents } from '../../shared/events/index.js';
import type { PublicUrl } from '../../shared/public-url.js';
import { formatCheckpoint, type NoteSigner, signNote } from '../../shared/tlog/index.js';
import type { Database, SqlExecutor } from '../../storage/engine/database.js';
import {
  type CheckpointStanding,
  checkpointStandings,
  latestAuditCheckpoint,
  type StoredCheckpoint,
  storeAuditCheckpoint,
} from '../../storage/tables/audit-checkpoints.js';
import {
  type AuditTreeState,
  type CheckpointToStore,
  extendAuditTreeFromMemory,
  growAuditTree,
  type TreeMemory,
} from '../../storage/tables/audit-tree.js';
import type { KeyCustody } from '../services/agentiam/custody.js';
import {
  type AuditSigningKeyRecord,
  auditNoteSigner,
  findActiveAuditKey,
  getOrCreateAuditKey,
} from './signing-key.js';

export const DEFAULT_CHECKPOINT_ENTRIES = 1000;
export const DEFAULT_CHECKPOINT_SECONDS = 60;
const MIN_SWEEP_MS = 250;
/** Committed entries remembered per tenant at most, waiting for the next growth. */
const MAX_REMEMBERED = 100_000;
const MAX_SWEEP_MS = 5000;

/** Why a checkpoint was cut (the metric's label). */
export type CheckpointTrigger = 'entries' | 'seconds' | 'first' | 'rotation' | 'demand';

export interface AuditCheckpointerOptions {
  readonly db: Database;
  readonly custody: KeyCustody;
  readonly publicUrl: PublicUrl;
  readonly events: Pick<EventBus, 'subscribe'>;
  readonly logger: Logger;
  /** AGENT_GATEWAY_AUDIT_CHECKPOINT_ENTRIES (default 1000). */
  readonly entries?: number | undefined;
  /** AGENT_GATEWAY_AUDIT_CHECKPOINT_SECONDS (default 60). */
  readonly seconds?: number | undefined;
  /**
   * Count appends heard on the bus (default true): every process's, for a control plane whose
   * data planes append. False where this process's writer is the one that appends (`start`): it
   * hands its commits over (noteCommitted), and the sweep finds anything appended elsewhere.
   */
  readonly followBus?: boolean;
  /** Called after each checkpoint cut (metrics). Must not throw. */
  readonly onCut?: (trigger: CheckpointTrigger, checkpoint: StoredCheckpoint) => void;
  /** Called after a failed cut (metrics). Must not throw. */
  readonly onFailure?: (error: unknown) => void;
}

export class AuditCheckpointer {
  readonly #options: AuditCheckpointerOptions;
  readonly #entries: number;
  readonly #secondsMs: number;
  /** Entries heard appended per tenant since its last cut. */
  readonly #pending = new Map<string, number>();
  /** Tenants with at least one checkpoint (learnt from sweeps and cuts). */
  readonly #anchored = new Set<string>();
  /** The cut in progress per tenant: cuts of one tenant run one after another. */
  readonly #cuts = new Map<string, Promise<StoredCheckpoint>>();
  #stopEvents: (() => Promise<void>) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;
  #stopped = false;
  #started = false;
  /** Per tenant: the tree's remembered edge and the entries this process committed since. */
  readonly #trees = new Map<string, TreeMemory>();
  /** The active audit key and its signer, as the last sweep or cut found them. */
  #key: { record: AuditSigningKeyRecord; signer: NoteSigner } | undefined;

  constructor(options: AuditCheckpointerOptions) {
    this.#options = options;
    this.#entries = options.entries ?? DEFAULT_CHECKPOINT_ENTRIES;
    this.#secondsMs = (options.seconds ?? DEFAULT_CHECKPOINT_SECONDS) * 1000;
  }

  /** Whether this process can sign (it holds the master key). */
  get ready(): boolean {
    return this.#options.custody.ready;
  }

  /**
   * Starts following appends and sweeping; the first sweep (every tenant without a checkpoint
   * gets one, every tenant behind catches up) runs before this resolves. Call once the database
   * is migrated and the master key handed over.
   */
  async start(): Promise<void> {
    if (!this.ready || this.#stopEvents !== undefined) return;
    this.#started = true;
    // Other processes' appends reach this one over the bus; this process's own commits are
    // counted as they commit (noteCommitted), cheaper than one event each.
    this.#stopEvents =
      this.#options.followBus === false
        ? async () => {}
        : followEvents(
            this.#options.events,
            EVENT_TYPES.AUDIT_APPENDED,
            (event) => this.#heard(event.tenantId, 1),
            (error) => this.#failed(error),
          );
    await this.#sweep();
    const every = Math.min(MAX_SWEEP_MS, Math.max(MIN_SWEEP_MS, this.#secondsMs / 4));
    this.#timer = setInterval(() => {
      this.#sweeping ??= this.#sweep().finally(() => {
        this.#sweeping = undefined;
      });
    }, every);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#stopEvents?.();
    await this.#sweeping;
    await Promise.allSettled([...this.#cuts.values()]);
  }

  /**
   * Cuts the tenant's checkpoint now over every entry committed so far and returns it (the one
   * already stored when nothing was appended since, signed by the active key).
   */
  cut(tenantId: string, trigger: CheckpointTrigger = 'demand'): Promise<StoredCheckpoint> {
    if (!this.ready) {
      return Promise.reject(
        gatewayError('AUDIT_CHECKPOINT_UNAVAILABLE', { reason: 'this process has no master key' }),
      );
    }
    const previous = this.#cuts.get(tenantId) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(() => this.#cutNow(tenantId, trigger))
      .finally(() => {
        if (this.#cuts.get(tenantId) === next) this.#cuts.delete(tenantId);
      });
    this.#cuts.set(tenantId, next);
    return next;
  }

  async #cutNow(tenantId: string, trigger: CheckpointTrigger): Promise<StoredCheckpoint> {
    const { db } = this.#options;
    this.#pending.set(tenantId, 0);
    // A cut on demand reads the active key (a rotation shows at once); the others use the one
    // the last sweep found.
    const { record: key, signer } =
      trigger === 'demand' || this.#key === undefined
        ? await this.#useKey(await findActiveAuditKey(db))
        : this.#key;
    const memory = this.#memoryOf(tenantId);
    const origin = `${key.name}/${tenantId}`;
    const sign = (state: AuditTreeState): CheckpointToStore => ({
      id: randomUUID(),
      rootHash: Buffer.from(state.root).toString('base64'),
      keyId: key.id,
      note: signNote(formatCheckpoint({ origin, size: state.size, rootHash: state.root }), [
        signer,
      ]),
    });
    // The rules' cuts under load: one round trip over what this process committed. A cut on
    // demand covers every committed entry, so it reads the head (below).
    if (trigger !== 'demand') {
      const fast = await extendAuditTreeFromMemory(db, tenantId, memory, sign);
      if (fast !== null) {
        const checkpoint: StoredCheckpoint = {
          ...fast.checkpoint,
          tenantId,
          treeSize: fast.state.size,
          cosignatures: '',
          createdAt: new Date(),
        };
        this.#anchored.add(tenantId);
        this.#options.onCut?.(trigger, checkpoint);
        return checkpoint;
      }
    }
    // Up to the head committed now: under a steady stream of appends a growth that followed
    // them would never end.
    const tree = await growAuditTree(db, tenantId, {
      upTo: 'head',
      memory,
    });
    const signed = sign(tree);
    const checkpoint = await storeAuditCheckpoint(db, {
      tenantId,
      treeSize: tree.size,
      rootHash: signed.rootHash,
      keyId: key.id,
      note: signed.note,
    });
    this.#anchored.add(tenantId);
    this.#options.onCut?.(trigger, checkpoint);
    return checkpoint;
  }

  /**
   * Takes the active key (`active`, or the stored one, made when there is none) and unseals its
   * signer once: cuts then sign without a query for the key. A sweep that finds another active
   * key (a rotation by `audit rotate-key`) switches.
   */
  async #useKey(
    active: AuditSigningKeyRecord | null,
  ): Promise<{ record: AuditSigningKeyRecord; signer: NoteSigner }> {
    const { db, custody, publicUrl } = this.#options;
    const record = active ?? (await getOrCreateAuditKey(db, custody, publicUrl.get()));
    if (this.#key?.record.id !== record.id) {
      this.#key = { record, signer: auditNoteSigner(custody, record) };
    }
    return this.#key;
  }

  /**
   * The audit writer of this process hands over what it committed (its onCommitted hook): the
   * tree then grows from memory instead of reading those entries back. Bounded: a tenant whose
   * backlog passes MAX_REMEMBERED is read from the database instead.
   */
  noteCommitted(entries: readonly AuditEntry[]): void {
    if (!this.#started || this.#stopped) return;
    const counts = new Map<string, number>();
    for (const entry of entries) {
      const memory = this.#memoryOf(entry.tenantId);
      if (memory.recent.length >= MAX_REMEMBERED) memory.recent.length = 0;
      memory.recent.push({ hash: entry.hash, prevHash: entry.prevHash });
      counts.set(entry.tenantId, (counts.get(entry.tenantId) ?? 0) + 1);
    }
    if (this.#options.followBus === false) {
      for (const [tenantId, count] of counts) this.#heard(tenantId, count);
    }
  }

  #memoryOf(tenantId: string): TreeMemory {
    let memory = this.#trees.get(tenantId);
    if (memory === undefined) {
      memory = { recent: [] };
      this.#trees.set(tenantId, memory);
    }
    return memory;
  }

  #heard(tenantId: string, count: number): void {
    if (this.#stopped) return;
    const pending = (this.#pending.get(tenantId) ?? 0) + count;
    this.#pending.set(tenantId, pending);
    if (!this.#anchored.has(tenantId)) {
      this.#schedule(tenantId, 'first');
    } else if (pending >= this.#entries) {
      this.#schedule(tenantId, 'entries');
    }
  }

  /** Cuts in the background, unless a cut of the tenant is already under way (it will cover it). */
  #schedule(tenantId: string, trigger: CheckpointTrigger): void {
    if (this.#cuts.has(tenantId)) return;
    this.cut(tenantId, trigger).catch((error: unknown) => this.#failed(error, tenantId));
  }

  async #sweep(): Promise<void> {
    if (this.#stopped) return;
    try {
      const { db } = this.#options;
      const active = await findActiveAuditKey(db);
      if (active !== null) await this.#useKey(active);
      const now = Date.now();
      for (const standing of await checkpointStandings(db)) {
        const trigger = this.#due(standing, active?.id ?? null, now);
        if (standing.latest !== null) this.#anchored.add(standing.tenantId);
        if (trigger !== null && !this.#stopped) {
          await this.cut(standing.tenantId, trigger).catch((error: unknown) =>
            this.#failed(error, standing.tenantId),
          );
        }
      }
    } catch (error) {
      this.#failed(error);
    }
  }

  #due(
    standing: CheckpointStanding,
    activeKeyId: string | null,
    now: number,
  ): CheckpointTrigger | null {
    const { latest, head } = standing;
    if (latest === null) return 'first';
    if (head - latest.treeSize >= this.#entries) return 'entries';
    if (head > latest.treeSize && now - latest.at.getTime() >= this.#secondsMs) return 'seconds';
    if (activeKeyId !== null && latest.keyId !== activeKeyId) return 'rotation';
    return null;
  }

  #failed(error: unknown, tenantId?: string): void {
    this.#options.logger.error({ err: error, tenantId }, 'audit checkpoint not cut');
    this.#options.onFailure?.(error);
  }
}

/** The tenant's latest checkpoint; AUDIT_CHECKPOINT_NOT_FOUND before the first. */
export async function requireLatestCheckpoint(
  db: SqlExecutor,
  tenantId: string,
): Promise<StoredCheckpoint> {
  const latest = await latestAuditCheckpoint(db, tenantId);
  if (latest === null) throw gatewayError('AUDIT_CHECKPOINT_NOT_FOUND');
  return latest;
}
