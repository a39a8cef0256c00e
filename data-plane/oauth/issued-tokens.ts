// Records issued access tokens (IssuedToken rows) without a database write on the request's path:
// issuance is queued in memory and written in one INSERT per interval (and on stop), like
// key-usage.ts. The rows are for listing and revocation; nothing that verifies a token reads them
// (introspection verifies the JWT itself), so a row written a moment late changes no answer.
// A row a revocation already inserted (revoked) wins: `on conflict do nothing`.
import type { Logger } from 'pino';
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
  readonly #logger: Logger | undefined;
  #pending: IssuedTokenRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #dropped = 0;

  constructor(db: Database, options: { intervalMs?: number; logger?: Logger } = {}) {
    this.#db = db;
    this.#logger = options.logger;
    this.#timer = setInterval(() => this.#flushInBackground(), options.intervalMs ?? 1_000);
    this.#timer.unref();
  }

  record(token: IssuedTokenRecord): void {
    // While the database is away the queue must not grow without bound: the rows are for listing
    // (revocation inserts its own), so beyond the cap new ones are dropped, and counted.
    if (this.#pending.length >= MAX_PENDING) {
      this.#dropped += 1;
      return;
    }
    this.#pending.push(token);
    if (this.#pending.length >= FLUSH_AT) this.#flushInBackground();
  }

  /** Writes every queued row; resolves once they are committed. */
  flush(): Promise<void> {
    // One write at a time; a failed one (its batch is lost: logged) does not stop the next.
    const next = this.#flushing.catch(() => {}).then(() => this.#write());
    this.#flushing = next;
    return next;
  }

  /** Stops the timer and writes what is queued; a failed last write is logged, not thrown. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush().catch((error: unknown) =>
      this.#logger?.warn({ err: error }, 'recording issued access tokens failed'),
    );
  }

  #flushInBackground(): void {
    this.flush().catch((error: unknown) =>
      this.#logger?.warn({ err: error }, 'recording issued access tokens failed'),
    );
  }

  async #write(): Promise<void> {
    if (this.#dropped > 0) {
      this.#logger?.warn({ dropped: this.#dropped }, 'issued access tokens not recorded');
      this.#dropped = 0;
    }
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
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
