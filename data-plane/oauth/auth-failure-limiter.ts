// Limits failed client authentications at the OAuth endpoints (issue 12: a wrong guess must cost
// more than a request), without letting a stranger lock an agent out (issue 22 item 5: client ids
// are not secret, and the attacker and the agent may share an address — NAT, loopback). So the
// limiter is consulted only for a request whose credentials did NOT verify: a right secret or
// assertion is never refused or delayed by it, whatever failed before and from wherever
// (client-auth.ts verifies first, in constant time, then asks here). Two keys count failures: the
// client id at one address (`perClient`) and the address alone (`perAddress`, for an attacker
// spraying client ids). When a key reaches its limit within a window it is blocked: its next
// failures are answered 429 with Retry-After instead of 401 until the block ends, and each block
// of a key that is blocked again doubles (backoff: windowMs, 2×, 4×… up to maxBlockMs); a key
// quiet for maxBlockMs starts over. Successes do not reset anything. Bounded: beyond `capacity`
// tracked keys the oldest are dropped.

export interface AuthFailureLimits {
  /** Failures per client id and address per window before its wrong attempts are refused (default 10). */
  readonly perClient?: number;
  /** Failures per address per window, whatever the client id (default 30). */
  readonly perAddress?: number;
  /** Window length in ms, and the first block's length (default 60 000). */
  readonly windowMs?: number;
  /** Longest block in ms (default 900 000). */
  readonly maxBlockMs?: number;
  /** Keys tracked at most (default 100 000). */
  readonly capacity?: number;
}

interface Entry {
  windowStartMs: number;
  failures: number;
  /** Epoch ms; 0 when not blocked. */
  blockedUntilMs: number;
  /** Blocks so far (the next one lasts windowMs × 2^blocks). */
  blocks: number;
  lastFailureMs: number;
}

export class AuthFailureLimiter {
  readonly #perClient: number;
  readonly #perAddress: number;
  readonly #windowMs: number;
  readonly #maxBlockMs: number;
  readonly #capacity: number;
  readonly #entries = new Map<string, Entry>();

  constructor(limits: AuthFailureLimits = {}) {
    this.#perClient = limits.perClient ?? 10;
    this.#perAddress = limits.perAddress ?? 30;
    this.#windowMs = limits.windowMs ?? 60_000;
    this.#maxBlockMs = Math.max(limits.maxBlockMs ?? 900_000, this.#windowMs);
    this.#capacity = limits.capacity ?? 100_000;
  }

  /**
   * Counts a failed authentication. Answers the seconds to wait when the client id at this
   * address, or the address, was already blocked (the failure is then refused with 429 and not
   * counted again), else 0 (answer the failure as it is).
   */
  refuseFailure(clientId: string | undefined, address: string, nowMs = Date.now()): number {
    const keys: [string, number][] = [[`a ${address}`, this.#perAddress]];
    if (clientId !== undefined) keys.push([`c ${clientId} ${address}`, this.#perClient]);
    let waitMs = 0;
    for (const [key] of keys) {
      const entry = this.#entries.get(key);
      if (entry && entry.blockedUntilMs > nowMs) {
        waitMs = Math.max(waitMs, entry.blockedUntilMs - nowMs);
      }
    }
    if (waitMs > 0) return Math.max(1, Math.ceil(waitMs / 1000));
    for (const [key, limit] of keys) this.#count(key, limit, nowMs);
    return 0;
  }

  #count(key: string, limit: number, nowMs: number): void {
    let entry = this.#entries.get(key);
    const quietSinceMs = entry ? Math.max(entry.lastFailureMs, entry.blockedUntilMs) : 0;
    if (entry && nowMs - quietSinceMs >= this.#maxBlockMs) entry = undefined;
    if (!entry) {
      this.#entries.delete(key);
      if (this.#entries.size >= this.#capacity) {
        const oldest = this.#entries.keys().next().value;
        if (oldest !== undefined) this.#entries.delete(oldest);
      }
      entry = { windowStartMs: nowMs, failures: 0, blockedUntilMs: 0, blocks: 0, lastFailureMs: 0 };
      this.#entries.set(key, entry);
    }
    if (nowMs - entry.windowStartMs >= this.#windowMs) {
      entry.windowStartMs = nowMs;
      entry.failures = 0;
    }
    entry.failures += 1;
    entry.lastFailureMs = nowMs;
    if (entry.failures >= limit) {
      const blockMs = Math.min(this.#windowMs * 2 ** entry.blocks, this.#maxBlockMs);
      entry.blockedUntilMs = nowMs + blockMs;
      entry.blocks += 1;
      entry.windowStartMs = nowMs + blockMs;
      entry.failures = 0;
    }
  }
}
