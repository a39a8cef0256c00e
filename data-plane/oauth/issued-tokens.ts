// Records issued access tokens (IssuedToken rows) without a database write on the request's path:
// issuance is queued in memory and written in one INSERT per interval (and on stop) by a
// BatchedWriter, like key-usage.ts. The rows are for listing and revocation; nothing that
// verifies a token reads them (introspection verifies the JWT itself), so a row written a moment
// late changes no answer.
// A row a revocation already inserted (revoked) wins: `on conflict do nothing`.
import type { Logger } from 'pino';
import { BatchedWriter } from '../../storage/batched-writer.js';
import type { Database } from '../../storage/database.js';

export interface IssuedTokenRecord {
  readonly jti: string;
  readonly tenantId: string;
  /** null for a token the gateway minted for itself to forward a call. */
  readonly clientId: string | null;
  readonly agentId: string;
  readonly audience: string;
  readonly scope: string;
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** Epoch seconds. */
  readonly expiresAt: number;
}

/** Rows queued beyond this are written at once rather than waiting for the interval. */
const FLUSH_AT = 1_000;
/** Rows queued at most (while writes fail); more are dropped. */
const MAX_PENDING = 100_000;

export class IssuedTokenRecorder {
  readonly #db: Database;
  readonly #writer: BatchedWriter<IssuedTokenRecord>;

  constructor(db: Database, options: { intervalMs?: number; logger?: Logger } = {}) {
    this.#db = db;
    // While the database is away the queue must not grow without bound: the rows are for listing
    // (revocation inserts its own), so beyond the cap new ones are dropped, and counted.
    this.#writer = new BatchedWriter({
      write: (batch) => this.#write(batch),
      intervalMs: options.intervalMs ?? 1_000,
      flushAt: FLUSH_AT,
      maxPending: MAX_PENDING,
      logger: options.logger,
      failureMessage: 'recording issued access tokens failed',
      droppedMessage: 'issued access tokens not recorded',
    });
  }

  record(token: IssuedTokenRecord): void {
    this.#writer.record(token);
  }

  /** Writes every queued row; resolves once they are committed. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /** Stops the timer and writes what is queued; a failed last write is logged, not thrown. */
  stop(): Promise<void> {
    return this.#writer.stop();
  }

  async #write(batch: readonly IssuedTokenRecord[]): Promise<void> {
    const seconds = (s: number) => new Date(s * 1000).toISOString();
    await this.#db.query(
      `insert into issued_tokens (id, "tenantId", "clientId", "agentId", audience, scope, "issuedAt", "expiresAt")
       select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                            $7::timestamptz[], $8::timestamptz[])
       on conflict (id) do nothing`,
      [
        batch.map((t) => t.jti),
        batch.map((t) => t.tenantId),
        batch.map((t) => t.clientId),
        batch.map((t) => t.agentId),
        batch.map((t) => t.audience),
        batch.map((t) => t.scope),
        batch.map((t) => seconds(t.issuedAt)),
        batch.map((t) => seconds(t.expiresAt)),
      ],
    );
  }
}
