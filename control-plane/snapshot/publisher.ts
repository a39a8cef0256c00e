// Builds configuration snapshots from the database and publishes them to its sinks: one at start,
// then a new one whenever the stored configuration changes. Besides its sink (the in-process store), further sinks can
// listen (`addSink`: the configuration stream to remote data planes); they get each snapshot the
// primary sink applied. Changes made through this process's services are published
// at once (`publishNow`); changes made by other processes sharing the database are noticed by a
// cheap fingerprint poll. The snapshot type, builder and the store's atomic swap are the ones the
// configuration stream to remote data planes uses.
import type { Logger } from 'pino';
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';
import type { Database } from '../../storage/engine/database.js';
import { buildConfigSnapshot, readConfigFingerprint } from './build-snapshot.js';

export interface SnapshotSink {
  apply(snapshot: ConfigSnapshot): { applied: boolean; version: number };
}

export interface LocalPublisherOptions {
  readonly pollIntervalMs?: number;
  readonly logger?: Logger;
}

export class SnapshotPublisher {
  readonly #db: Database;
  readonly #sink: SnapshotSink;
  readonly #logger: Logger | undefined;
  readonly #pollIntervalMs: number;
  readonly #extraSinks = new Set<SnapshotSink>();
  #version = 0;
  #floor = 0;
  #last: ConfigSnapshot | undefined;
  #fingerprint = '';
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  #next: Promise<void> | undefined;

  constructor(db: Database, sink: SnapshotSink, options: LocalPublisherOptions = {}) {
    this.#db = db;
    this.#sink = sink;
    this.#logger = options.logger;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  /** Builds and applies the first snapshot, then starts watching for changes. */
  async start(): Promise<void> {
    await this.publishNow();
    this.#timer = setInterval(() => {
      this.#poll().catch((error: unknown) =>
        this.#logger?.warn({ err: error }, 'configuration poll failed; keeping last snapshot'),
      );
    }, this.#pollIntervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Rebuilds and resolves once a snapshot that includes every change committed before the call is
   * applied. Calls during a build coalesce into one more build after it.
   */
  publishNow(): Promise<void> {
    if (this.#inFlight) {
      this.#next ??= this.#inFlight.then(() => {
        this.#next = undefined;
        return this.publishNow();
      });
      return this.#next;
    }
    this.#inFlight = this.#build().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  /** Adds a sink that gets every applied snapshot (the last one at once); returns its removal. */
  addSink(sink: SnapshotSink): () => void {
    this.#extraSinks.add(sink);
    if (this.#last) sink.apply(this.#last);
    return () => {
      this.#extraSinks.delete(sink);
    };
  }

  /** Publishes a snapshot whose version is above `version` (a resuming client saw that one). */
  publishAbove(version: number): Promise<void> {
    this.#floor = Math.max(this.#floor, version);
    return this.publishNow();
  }

  async #poll(): Promise<void> {
    if ((await readConfigFingerprint(this.#db)) !== this.#fingerprint) await this.publishNow();
  }

  async #build(): Promise<void> {
    const fingerprint = await readConfigFingerprint(this.#db);
    const snapshot = await buildConfigSnapshot(this.#db, Math.max(this.#version, this.#floor) + 1, {
      // Checked before it is handed out; each store rejects a tenant whose problems require it.
      onProblems: (problems, version) => {
        for (const [tenantId, list] of problems) {
          this.#logger?.warn(
            { tenantId, version, problems: list.map((p) => `${p.code}: ${p.message}`) },
            'configuration snapshot has consistency problems',
          );
        }
      },
    });
    const result = this.#sink.apply(snapshot);
    if (result.applied) {
      this.#version = snapshot.version;
      this.#fingerprint = fingerprint;
      this.#last = snapshot;
      for (const sink of this.#extraSinks) sink.apply(snapshot);
      this.#logger?.info({ version: snapshot.version }, 'configuration snapshot applied');
    }
  }
}
