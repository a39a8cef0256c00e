// The single-use rule of Agent-Proof `jti`s (DESIGN.md §6): a proof is accepted once per data
// plane. A proof is valid while |now − iat| ≤ 60 s, so a jti must be remembered until iat + 60 s
// (plus a margin for the clock read between verification and claim); after that the proof is
// refused as expired anyway and its jti can be forgotten.
//
// Entries sit in buckets by the second their memory may end (rounded up to BUCKET_MS): every claim
// drops the buckets that are over, so forgetting is O(1) per entry and never scans the store. The
// store is bounded: when it holds `capacity` live jtis, new proofs are refused (fail closed) until
// old ones age out — an evicted jti could otherwise be replayed within its window.

/** Accepted distance between a proof's `iat` and the gateway's clock (DESIGN.md §6). */
export const PROOF_WINDOW_MS = 60_000;
const MARGIN_MS = 5_000;
const BUCKET_MS = 5_000;
export const DEFAULT_REPLAY_CAPACITY = 500_000;

export type ClaimResult = 'claimed' | 'replayed' | 'full';

export class ReplayGuard {
  readonly #capacity: number;
  /** key → the epoch ms until which it is remembered. */
  readonly #seen = new Map<string, number>();
  /** Bucket index (forgetAt / BUCKET_MS, rounded up) → the keys it forgets. */
  readonly #buckets = new Map<number, string[]>();
  #oldestBucket = Number.POSITIVE_INFINITY;

  constructor(options: { capacity?: number | undefined } = {}) {
    this.#capacity = options.capacity ?? DEFAULT_REPLAY_CAPACITY;
  }

  get size(): number {
    return this.#seen.size;
  }

  /** How many live proofs it remembers at most. */
  get capacity(): number {
    return this.#capacity;
  }

  /**
   * Claims `jti` of the key `scope` (the agent's public key: one agent cannot burn another's
   * jtis) for a proof issued at `iatSeconds`. 'replayed' when it was claimed within its window.
   */
  claim(scope: string, jti: string, iatSeconds: number, nowMs = Date.now()): ClaimResult {
    this.#forgetUntil(nowMs);
    const key = `${scope} ${jti}`;
    const until = this.#seen.get(key);
    if (until !== undefined && until > nowMs) return 'replayed';
    if (this.#seen.size >= this.#capacity) return 'full';
    const forgetAt = Math.max(iatSeconds * 1000, nowMs) + PROOF_WINDOW_MS + MARGIN_MS;
    this.#seen.set(key, forgetAt);
    const bucket = Math.ceil(forgetAt / BUCKET_MS);
    const keys = this.#buckets.get(bucket);
    if (keys) keys.push(key);
    else this.#buckets.set(bucket, [key]);
    if (bucket < this.#oldestBucket) this.#oldestBucket = bucket;
    return 'claimed';
  }

  /** Drops every bucket whose whole span has passed. */
  #forgetUntil(nowMs: number): void {
    const current = Math.floor(nowMs / BUCKET_MS);
    if (this.#oldestBucket > current) return;
    for (const [bucket, keys] of this.#buckets) {
      if (bucket > current) continue;
      for (const key of keys) {
        const until = this.#seen.get(key);
        if (until !== undefined && until <= nowMs) this.#seen.delete(key);
      }
      this.#buckets.delete(bucket);
    }
    let oldest = Number.POSITIVE_INFINITY;
    for (const bucket of this.#buckets.keys()) if (bucket < oldest) oldest = bucket;
    this.#oldestBucket = oldest;
  }
}
