// Records when each API key was last used without a database write per request: uses are queued
// by key (one entry per key, the latest kept) and written in one UPDATE per interval by a
// BatchedWriter. Operators see `lastUsedAt` at most one interval late, which is what it is for:
// finding unused keys. The queue needs no bound: it holds at most one entry per existing key.
import type { Logger } from 'pino';
import { BatchedWriter } from '../storage/engine/batched-writer.js';
import type { Database } from '../storage/engine/database.js';

interface KeyUse {
  readonly keyId: string;
  /** Epoch milliseconds. */
  readonly at: number;
}

export class KeyUsageRecorder {
  readonly #db: Database;
  readonly #writer: BatchedWriter<KeyUse>;

  constructor(db: Database, options: { intervalMs?: number; logger?: Logger } = {}) {
    this.#db = db;
    this.#writer = new BatchedWriter({
      write: (batch) => this.#write(batch),
      intervalMs: options.intervalMs ?? 30_000,
      keyOf: (use) => use.keyId,
      logger: options.logger,
      failureMessage: 'recording API key use failed',
    });
  }

  record(keyId: string, at = Date.now()): void {
    this.#writer.record({ keyId, at });
  }

  /** Writes every queued use; resolves once they are committed. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /** Stops the timer and writes what is queued; a failed last write is logged, not thrown. */
  stop(): Promise<void> {
    return this.#writer.stop();
  }

  async #write(batch: readonly KeyUse[]): Promise<void> {
    await this.#db.query(
      `update api_keys k set "lastUsedAt" = greatest(coalesce(k."lastUsedAt", u.at), u.at)
         from unnest($1::text[], $2::timestamptz[]) as u(id, at)
        where k.id = u.id`,
      [batch.map((use) => use.keyId), batch.map((use) => new Date(use.at).toISOString())],
    );
  }
}
