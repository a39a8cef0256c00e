// Records when each API key was last used without a database write per request: uses are noted
// in a Map (one set per request) and written in one UPDATE per interval. Operators see
// `lastUsedAt` at most one interval late, which is what it is for: finding unused keys.
import type { Logger } from 'pino';
import type { Database } from '../storage/database.js';

export class KeyUsageRecorder {
  readonly #db: Database;
  readonly #logger: Logger | undefined;
  #pending = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Database, options: { intervalMs?: number; logger?: Logger } = {}) {
    this.#db = db;
    this.#logger = options.logger;
    this.#timer = setInterval(() => {
      this.flush().catch((error: unknown) =>
        this.#logger?.warn({ err: error }, 'recording API key use failed'),
      );
    }, options.intervalMs ?? 30_000);
    this.#timer.unref();
  }

  record(keyId: string, at = Date.now()): void {
    this.#pending.set(keyId, at);
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    const ids = [...batch.keys()];
    const times = ids.map((id) => new Date(batch.get(id) as number).toISOString());
    await this.#db.query(
      `update api_keys k set "lastUsedAt" = greatest(coalesce(k."lastUsedAt", u.at), u.at)
         from unnest($1::text[], $2::timestamptz[]) as u(id, at)
        where k.id = u.id`,
      [ids, times],
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}
