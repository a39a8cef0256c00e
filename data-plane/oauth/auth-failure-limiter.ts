// Limits failed client authentications at the OAuth endpoints, per client id and per address
// (issue 12: a guessed secret must cost more than a request). Fixed windows: once a key has
// `maxFailures` failures in a window, every attempt with it is refused (429, Retry-After) until
// the window ends, whether its credentials are right or not. Successes do not reset the count.
// Bounded: beyond `capacity` tracked keys the oldest windows are dropped.

export interface AuthFailureLimits {
  /** Failures per client id per window (default 10). */
  readonly perClient?: number;
  /** Failures per address per window (default 30). */
  readonly perAddress?: number;
  /** Window length in ms (default 60 000). */
  readonly windowMs?: number;
  /** Keys tracked at most (default 100 000). */
  readonly capacity?: number;
}

interface Window {
  startMs: number;
  failures: number;
}

export class AuthFailureLimiter {
  readonly #perClient: number;
  readonly #perAddress: number;
  readonly #windowMs: number;
  readonly #capacity: number;
  readonly #windows = new Map<string, Window>();

  constructor(limits: AuthFailureLimits = {}) {
    this.#perClient = limits.perClient ?? 10;
    this.#perAddress = limits.perAddress ?? 30;
    this.#windowMs = limits.windowMs ?? 60_000;
    this.#capacity = limits.capacity ?? 100_000;
  }

  /** Seconds to wait when the client id or the address is over its limit, else 0. */
  retryAfterSeconds(clientId: string | undefined, address: string, nowMs = Date.now()): number {
    const byAddress = this.#blockedFor(`a ${address}`, this.#perAddress, nowMs);
    const byClient =
      clientId === undefined ? 0 : this.#blockedFor(`c ${clientId}`, this.#perClient, nowMs);
    return Math.max(byAddress, byClient);
  }

  recordFailure(clientId: string | undefined, address: string, nowMs = Date.now()): void {
    this.#count(`a ${address}`, nowMs);
    if (clientId !== undefined) this.#count(`c ${clientId}`, nowMs);
  }

  #blockedFor(key: string, limit: number, nowMs: number): number {
    const window = this.#windows.get(key);
    if (!window || nowMs - window.startMs >= this.#windowMs || window.failures < limit) return 0;
    return Math.max(1, Math.ceil((window.startMs + this.#windowMs - nowMs) / 1000));
  }

  #count(key: string, nowMs: number): void {
    const window = this.#windows.get(key);
    if (window && nowMs - window.startMs < this.#windowMs) {
      window.failures += 1;
      return;
    }
    this.#windows.delete(key);
    if (this.#windows.size >= this.#capacity) {
      const oldest = this.#windows.keys().next().value;
      if (oldest !== undefined) this.#windows.delete(oldest);
    }
    this.#windows.set(key, { startMs: nowMs, failures: 1 });
  }
}
