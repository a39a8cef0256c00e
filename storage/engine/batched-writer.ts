// Batched background writes for the recorders that keep database writes off a request's path
// (issued tokens, delegation links, API key use): an item is queued in memory in a synchronous
// step and written with its batch once per interval, at once when the queue reaches `flushAt`,
// and on stop. Invariants:
// - one write at a time, in the order flushes were asked for; a failed write loses its batch (the
//   caller's write function may undo its own bookkeeping) and does not stop the next;
// - the queue is bounded by `maxPending` while writes fail: items beyond it are dropped, counted,
//   and the count is logged by the next write;
// - a failure of a background write or of the last write at stop is logged, never thrown;
// - with `keyOf`, an item replaces the queued one of the same key (its place in the queue kept).
import type { Logger } from 'pino';

export interface BatchedWriterOptions<T> {
  /** Writes one batch; a rejection loses it. */
  readonly write: (batch: readonly T[]) => Promise<void>;
  readonly intervalMs: number;
  /** Queued items at which a write starts at once rather than at the interval (default: none). */
  readonly flushAt?: number;
  /** Items queued at most; more are dropped and counted (default: no bound). */
  readonly maxPending?: number;
  /** Items with the same key are queued once, the last one kept. */
  readonly keyOf?: (item: T) => string;
  readonly logger?: Logger | undefined;
  /** Logged with the error when a write fails (e.g. 'recording issued access tokens failed'). */
  readonly failureMessage: string;
  /** Logged with the count of dropped items (default: `${failureMessage} (queue full)`). */
  readonly droppedMessage?: string;
}

export class BatchedWriter<T> {
  readonly #write: (batch: readonly T[]) => Promise<void>;
  readonly #flushAt: number;
  readonly #maxPending: number;
  readonly #keyOf: ((item: T) => string) | undefined;
  readonly #logger: Logger | undefined;
  readonly #failureMessage: string;
  readonly #droppedMessage: string;
  /** Keyed by `keyOf`, or by a running number when items have no key. */
  #pending = new Map<unknown, T>();
  #sequence = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #dropped = 0;

  constructor(options: BatchedWriterOptions<T>) {
    this.#write = options.write;
    this.#flushAt = options.flushAt ?? Number.POSITIVE_INFINITY;
    this.#maxPending = options.maxPending ?? Number.POSITIVE_INFINITY;
    this.#keyOf = options.keyOf;
    this.#logger = options.logger;
    this.#failureMessage = options.failureMessage;
    this.#droppedMessage = options.droppedMessage ?? `${options.failureMessage} (queue full)`;
    this.#timer = setInterval(() => this.#flushInBackground(), options.intervalMs);
    this.#timer.unref();
  }

  /** Items queued and not yet taken by a write. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Queues an item; false when the queue is full and it was dropped. Never throws. */
  record(item: T): boolean {
    const key = this.#keyOf === undefined ? this.#sequence++ : this.#keyOf(item);
    if (this.#pending.size >= this.#maxPending && !this.#pending.has(key)) {
      this.#dropped += 1;
      return false;
    }
    this.#pending.set(key, item);
    if (this.#pending.size >= this.#flushAt) this.#flushInBackground();
    return true;
  }

  /** Writes every queued item; resolves once they are committed, rejects when the write fails. */
  flush(): Promise<void> {
    const next = this.#flushing.catch(() => {}).then(() => this.#writePending());
    this.#flushing = next;
    return next;
  }

  /** Stops the timer and writes what is queued; a failed last write is logged, not thrown. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush().catch((error: unknown) => this.#logFailure(error));
  }

  #flushInBackground(): void {
    this.flush().catch((error: unknown) => this.#logFailure(error));
  }

  #logFailure(error: unknown): void {
    this.#logger?.warn({ err: error }, this.#failureMessage);
  }

  async #writePending(): Promise<void> {
    if (this.#dropped > 0) {
      this.#logger?.warn({ dropped: this.#dropped }, this.#droppedMessage);
      this.#dropped = 0;
    }
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    await this.#write(batch);
  }
}
