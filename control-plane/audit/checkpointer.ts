// Cuts each tenant's signed audit checkpoints (docs/audit.md, "Checkpoints"): it grows the
// tenant's Merkle tree over the entries appended since (storage/tables/audit-tree.ts), signs the
// C2SP checkpoint of that size with the audit key, and stores the signed note. A checkpoint is
// cut when `entries` entries were appended since the last one, when `seconds` passed with at
// least one new entry, when a tenant has none yet (a new tenant gets one at once), when the
// audit key was rotated, and on demand (`cut`).
//
// It runs only where the master key is (the control plane, or `start`): data planes append and
// never sign. Appends never wait for it: it follows `audit.appended` events (every process's, over
// LISTEN/NOTIFY on PostgreSQL) to count, and a sweep every few seconds reads where every tenant
// stands, which also covers events lost while a connection was down. Cuts of one tenant run one
// at a time; two control planes cutting the same tenant agree (the tree grows under a row lock,
// a checkpoint is stored once per size and key).
import type { Logger } from 'pino';
import { gatewayError } from '../../shared/errors/index.js';
import { EVENT_TYPES, type EventBus, followEvents } from '../../shared/events/index.js';
import type { PublicUrl } from '../../shared/public-url.js';
import { formatCheckpoint, signNote } from '../../shared/tlog/index.js';
import type { Database } from '../../storage/engine/database.js';
import {
  type CheckpointStanding,
  checkpointStandings,
  latestAuditCheckpoint,
  type StoredCheckpoint,
  storeAuditCheckpoint,
} from '../../storage/tables/audit-checkpoints.js';
import { growAuditTree } from '../../storage/tables/audit-tree.js';
import type { KeyCustody } from '../services/agentiam/custody.js';
import { auditNoteSigner, findActiveAuditKey, getOrCreateAuditKey } from './signing-key.js';

export const DEFAULT_CHECKPOINT_ENTRIES = 1000;
export const DEFAULT_CHECKPOINT_SECONDS = 60;
const MIN_SWEEP_MS = 250;
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
    this.#stopEvents = followEvents(
      this.#options.events,
      EVENT_TYPES.AUDIT_APPENDED,
      (event) => this.#heard(event.tenantId),
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
    const { db, custody, publicUrl } = this.#options;
    this.#pending.set(tenantId, 0);
    const key = await getOrCreateAuditKey(db, custody, publicUrl.get());
    const tree = await growAuditTree(db, tenantId);
    const body = formatCheckpoint({
      origin: `${key.name}/${tenantId}`,
      size: tree.size,
      rootHash: tree.root,
    });
    const checkpoint = await storeAuditCheckpoint(db, {
      tenantId,
      treeSize: tree.size,
      rootHash: Buffer.from(tree.root).toString('base64'),
      keyId: key.id,
      note: signNote(body, [auditNoteSigner(custody, key)]),
    });
    this.#anchored.add(tenantId);
    this.#options.onCut?.(trigger, checkpoint);
    return checkpoint;
  }

  #heard(tenantId: string): void {
    if (this.#stopped) return;
    const pending = (this.#pending.get(tenantId) ?? 0) + 1;
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
  db: Database,
  tenantId: string,
): Promise<StoredCheckpoint> {
  const latest = await latestAuditCheckpoint(db, tenantId);
  if (latest === null) throw gatewayError('AUDIT_CHECKPOINT_NOT_FOUND');
  return latest;
}
