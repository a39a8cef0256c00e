// Counts calls against the usage limits they match (docs/limits.md), for one data-plane process.
//
// Budgets (sums of an argument) are exact across every data plane: each reservation is one
// conditional upsert on the shared database (storage/tables/usage-counters.ts), and the database
// decides. Call-count limits are counted here first, so an allow under one costs no round trip:
// a process allows a call while its view (the database's total at its last exchange plus its own
// calls not yet added) stays under maxCalls and it holds fewer than `slice` calls the database has
// not seen; those are added in the background, coalesced, one exchange per counter at a time,
// and each exchange brings back the total of every process. Past either bound, the call is decided
// by the database: pending calls are added, then one conditional reservation. So one process is
// exact, a client within the limit is never refused (a refusal always comes from the database),
// and across N processes at most N × slice calls are allowed that no other process saw, where
// slice = max(1, ⌊maxCalls / 10 / N⌋): the overshoot is at most max(10 % of maxCalls, N calls).
// N is the number of registered, unrevoked data planes (at least 1), read from the database
// before the first counter opens (a data plane of a fleet never counts with a lone process's
// slice, not even in its first second) and again every 30 s.
//
// Windows are the database's: the process keeps the offset between its clock and the database's,
// refreshed by every exchange. Without the database, budgets refuse (fail closed), call-count
// limits serve up to their local allowance, and calls under no limit are not affected. A counter
// the process opens while the database is away (an agent it had not counted, a new window)
// starts from zero, a lower bound of the fleet's total, so the bound above still holds; NPL is
// never given such an unread count as `usage` (the call is refused as the database's would be).
import { readAmount } from '../../shared/limits/amounts.js';
import type { LimitSubject } from '../../shared/limits/usage-limits.js';
import { secondsToReset, windowStartOf } from '../../shared/limits/windows.js';
import type { Database } from '../../storage/engine/database.js';
import {
  addCalls,
  type CounterKey,
  type CounterReading,
  countDataPlanes,
  purgeEndedWindows,
  readDatabaseClock,
  readUsage,
  releaseUsage,
  reserveUsage,
} from '../../storage/tables/usage-counters.js';
import { type CompiledLimit, decimalText } from './compiled-limits.js';

/** What a refusal or hold says about the limit (the inspect answer's `limit` object). */
export interface LimitHit {
  readonly limitId: string;
  readonly per: LimitSubject;
  readonly windowSeconds: number;
  /** Calls (a call-count refusal) or the sum (a budget refusal) counted in the window so far. */
  readonly used: number;
  /** maxCalls or maxSum. */
  readonly max: number;
  /** What this call would have added: 1 call, or its amount. */
  readonly requested: number;
  readonly resetsAt: string;
  readonly retryAfterSeconds: number;
}

export type LimitKind = 'calls' | 'sum';

/** One call's usage, reserved in every limit it matches; `release` gives it all back. */
export interface Reservation {
  release(): Promise<void>;
}

export type LimitCheck =
  | { readonly ok: true; readonly reservation: Reservation }
  | {
      readonly ok: false;
      readonly reason: 'invalid_amount';
      readonly limit: CompiledLimit;
      readonly problem: string;
    }
  | {
      readonly ok: false;
      readonly reason: 'exceeded';
      readonly limit: CompiledLimit;
      readonly kind: LimitKind;
      readonly hit: LimitHit;
    }
  | {
      readonly ok: false;
      readonly reason: 'unavailable';
      readonly limit: CompiledLimit;
      readonly error: Error;
    };

export interface LimitCall {
  readonly tenantId: string;
  readonly agentId: string;
  readonly toolName: string;
  readonly args: unknown;
}

/** The window's values NPL sees as usage.<limitId>.* (calls and, for a budget, sum). */
export type LimitUsageView = {
  readonly calls: number;
  readonly callsAfter: number;
  readonly sum?: number;
  readonly sumAfter?: number;
};

export interface UsageLimiterOptions {
  readonly db: Database;
  /** How often pending counts are added and ended windows forgotten (default 1000 ms). */
  readonly flushIntervalMs?: number;
  /** How often the number of data planes is re-read (default 30 s). */
  readonly dataPlaneCountIntervalMs?: number;
}

interface LocalCounter {
  readonly key: CounterKey;
  readonly windowStart: number;
  /** The database's total at the last exchange (every process's calls). */
  known: number;
  /** `known` came from the database (false: opened without it, from zero). */
  read: boolean;
  /** Calls allowed here and not yet sent. */
  pending: number;
  /** Calls being added right now. */
  inflight: number;
  /** Calls being decided by the database right now. */
  reserving: number;
  flushing: Promise<void> | null;
  scheduled: boolean;
}

export class UsageLimiter {
  readonly #db: Database;
  readonly #counters = new Map<string, LocalCounter>();
  /** Counters being created: their window's total is being read from the database. */
  readonly #opening = new Map<string, Promise<LocalCounter>>();
  /** Database clock minus ours, in ms; null until the first exchange. */
  #clockOffsetMs: number | null = null;
  #dataPlanes = 1;
  /** Our clock (ms) when the number of data planes was last read. */
  #dataPlanesReadAt = 0;
  /** The database's clock and the number of data planes, read once before the first counter. */
  #starting: Promise<void> | null = null;
  #started = false;
  readonly #dataPlaneCountIntervalMs: number;
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(options: UsageLimiterOptions) {
    this.#db = options.db;
    this.#dataPlaneCountIntervalMs = options.dataPlaneCountIntervalMs ?? 30_000;
    this.#timer = setInterval(() => this.#tick(), options.flushIntervalMs ?? 1000);
    this.#timer.unref();
  }

  /**
   * Reserves the call in every limit of `limits` (those it matches), in order; if one refuses,
   * the earlier reservations are given back. `force` reserves whatever it exceeds (a call a human
   * approved, or a shadow call, which is forwarded anyway).
   */
  async reserve(
    call: LimitCall,
    limits: readonly CompiledLimit[],
    options: { readonly force?: boolean } = {},
  ): Promise<LimitCheck> {
    const amounts: (number | null)[] = [];
    for (const limit of limits) {
      if (!limit.budget) {
        amounts.push(null);
        continue;
      }
      const reading = readAmount(call.args, limit.sumPath);
      if (!reading.ok)
        return { ok: false, reason: 'invalid_amount', limit, problem: reading.problem };
      amounts.push(reading.amount);
    }
    const made: Reservation[] = [];
    for (const [index, limit] of limits.entries()) {
      let outcome: LimitCheck;
      try {
        outcome = limit.budget
          ? await this.#reserveBudget(call, limit, amounts[index] as number, options.force === true)
          : await this.#reserveCall(call, limit, options.force === true);
      } catch (error) {
        outcome = { ok: false, reason: 'unavailable', limit, error: error as Error };
      }
      if (!outcome.ok) {
        await releaseAll(made);
        return outcome;
      }
      made.push(outcome.reservation);
    }
    return { ok: true, reservation: { release: () => releaseAll(made) } };
  }

  /** The window's values of each limit before this call and with it (NPL's usage context). */
  async view(
    call: LimitCall,
    limits: readonly CompiledLimit[],
  ): Promise<Record<string, LimitUsageView>> {
    const view: Record<string, LimitUsageView> = {};
    const budgets = limits.filter((limit) => limit.budget);
    const readings = await readUsage(
      this.#db,
      budgets.map((limit) => keyOf(call, limit)),
    );
    budgets.forEach((limit, index) => {
      const reading = readings[index] as CounterReading;
      this.#noteClock(reading.now);
      const amount = readAmount(call.args, limit.sumPath);
      const sum = Number(reading.amount);
      view[limit.limit.limitId] = amount.ok
        ? {
            calls: reading.calls,
            callsAfter: reading.calls + 1,
            sum,
            sumAfter: sum + amount.amount,
          }
        : { calls: reading.calls, callsAfter: reading.calls + 1, sum };
    });
    for (const limit of limits) {
      if (limit.budget) continue;
      const counter = await this.#counterFor(call, limit, false);
      if (!counter.read) {
        throw new Error(`the calls counted under ${limit.limit.limitId} could not be read`);
      }
      const calls = counter.known + counter.pending + counter.inflight + counter.reserving;
      view[limit.limit.limitId] = { calls, callsAfter: calls + 1 };
    }
    return view;
  }

  /** Adds every pending count (the gateway is stopping); later calls find the limiter closed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await Promise.allSettled([...this.#counters.values()].map((counter) => this.#flush(counter)));
  }

  async #reserveBudget(
    call: LimitCall,
    limit: CompiledLimit,
    amount: number,
    force: boolean,
  ): Promise<LimitCheck> {
    const key = keyOf(call, limit);
    const amountText = decimalText(amount);
    const reading = await reserveUsage(this.#db, key, amountText, {
      maxCalls: limit.limit.maxCalls,
      maxSum: limit.maxSumText,
      force,
    });
    if (reading) {
      this.#noteClock(reading.now);
      return {
        ok: true,
        reservation: {
          release: () => releaseUsage(this.#db, key, reading.windowStart, amountText),
        },
      };
    }
    const [current] = await readUsage(this.#db, [key]);
    const now = current as CounterReading;
    this.#noteClock(now.now);
    const sum = Number(now.amount);
    const maxCalls = limit.limit.maxCalls;
    // Which bound refused: the count when one more call is past it, else the sum.
    const byCalls = maxCalls !== null && now.calls + 1 > maxCalls;
    return {
      ok: false,
      reason: 'exceeded',
      limit,
      kind: byCalls ? 'calls' : 'sum',
      hit: byCalls
        ? hitOf(limit, now.calls, maxCalls, 1, now.now)
        : hitOf(limit, sum, limit.limit.maxSum as number, amount, now.now),
    };
  }

  async #reserveCall(call: LimitCall, limit: CompiledLimit, force: boolean): Promise<LimitCheck> {
    const max = limit.limit.maxCalls as number;
    const counter = await this.#counterFor(call, limit, true);
    const local = counter.pending + counter.inflight + counter.reserving;
    if (force || (counter.known + local < max && local < this.#slice(max))) {
      counter.pending += 1;
      this.#schedule(counter);
      return { ok: true, reservation: localRelease(this.#db, counter) };
    }
    // Past the local allowance: the database decides, after it has every call counted here.
    counter.reserving += 1;
    try {
      await this.#flush(counter);
      const reading = await reserveUsage(this.#db, counter.key, '0', {
        maxCalls: max,
        maxSum: null,
      });
      if (reading) {
        this.#noteClock(reading.now);
        noteTotal(counter, reading);
        const key = counter.key;
        return {
          ok: true,
          reservation: { release: () => releaseUsage(this.#db, key, reading.windowStart, '0') },
        };
      }
      const [current] = await readUsage(this.#db, [counter.key]);
      const now = current as CounterReading;
      this.#noteClock(now.now);
      noteTotal(counter, now);
      return {
        ok: false,
        reason: 'exceeded',
        limit,
        kind: 'calls',
        hit: hitOf(limit, now.calls, max, 1, now.now),
      };
    } finally {
      counter.reserving -= 1;
    }
  }

  /**
   * The counter of the call's subject in the current window (the database's clock). A new one
   * starts from the database's total, so a restarted process continues where the fleet is; when
   * that cannot be read, from zero if `fromZero` (the reservation's local allowance), else the
   * read's error.
   */
  async #counterFor(
    call: LimitCall,
    limit: CompiledLimit,
    fromZero: boolean,
  ): Promise<LocalCounter> {
    if (!this.#started) {
      this.#starting ??= this.#start();
      await this.#starting;
    }
    const key = keyOf(call, limit);
    const nowSeconds = (Date.now() + (this.#clockOffsetMs ?? 0)) / 1000;
    const windowStart = windowStartOf(nowSeconds, key.windowSeconds);
    const id = `${key.tenantId}\u0000${key.limitId}\u0000${key.agentId}\u0000${key.toolName}\u0000${key.windowSeconds}\u0000${windowStart}`;
    const existing = this.#counters.get(id);
    if (existing !== undefined) return existing;
    const opening = this.#opening.get(id);
    if (opening !== undefined) return opening;
    const open = (async () => {
      let reading: CounterReading | undefined;
      try {
        [reading] = await readUsage(this.#db, [key]);
      } catch (error) {
        if (!fromZero) throw error;
      }
      const counter: LocalCounter = {
        key,
        windowStart,
        known: reading && reading.windowStart === windowStart ? reading.calls : 0,
        read: reading !== undefined,
        pending: 0,
        inflight: 0,
        reserving: 0,
        flushing: null,
        scheduled: false,
      };
      this.#counters.set(id, counter);
      return counter;
    })();
    this.#opening.set(id, open);
    try {
      return await open;
    } finally {
      this.#opening.delete(id);
    }
  }

  /** Reads the clock and N; a failure (no database) is retried by the next call. */
  async #start(): Promise<void> {
    try {
      this.#noteClock(await readDatabaseClock(this.#db));
      this.#dataPlanesReadAt = Date.now();
      this.#dataPlanes = await countDataPlanes(this.#db);
      this.#started = true;
    } finally {
      this.#starting = null;
    }
  }

  /** Calls a process may allow that no other process saw: ⌊maxCalls / 10 / N⌋, at least 1. */
  #slice(maxCalls: number): number {
    return Math.max(1, Math.floor(maxCalls / 10 / this.#dataPlanes));
  }

  #schedule(counter: LocalCounter): void {
    if (counter.scheduled || counter.flushing !== null) return;
    counter.scheduled = true;
    setImmediate(() => {
      counter.scheduled = false;
      this.#flush(counter).catch(() => {
        // Kept pending; the next tick retries, and the database path refuses meanwhile.
      });
    });
  }

  /** Adds the counter's pending calls (after any exchange in flight) and learns the total. */
  async #flush(counter: LocalCounter): Promise<void> {
    while (counter.flushing !== null) await counter.flushing.catch(() => {});
    if (counter.pending === 0) return;
    const sending = counter.pending;
    counter.pending = 0;
    counter.inflight = sending;
    counter.flushing = (async () => {
      try {
        const reading = await addCalls(this.#db, counter.key, counter.windowStart, sending);
        this.#noteClock(reading.now);
        noteTotal(counter, reading);
      } catch (error) {
        counter.pending += sending;
        throw error;
      } finally {
        counter.inflight = 0;
        counter.flushing = null;
      }
    })();
    await counter.flushing;
    if (counter.pending > 0) this.#schedule(counter);
  }

  #noteClock(databaseSeconds: number): void {
    if (Number.isFinite(databaseSeconds)) {
      this.#clockOffsetMs = databaseSeconds * 1000 - Date.now();
    }
  }

  #tick(): void {
    const nowMs = Date.now() + (this.#clockOffsetMs ?? 0);
    const localMs = Date.now();
    for (const [id, counter] of this.#counters) {
      if (counter.pending > 0) {
        this.#flush(counter).catch(() => {});
        continue;
      }
      const ended = (counter.windowStart + counter.key.windowSeconds) * 1000 < nowMs;
      if (ended && counter.flushing === null && counter.reserving === 0) this.#counters.delete(id);
    }
    if (localMs - this.#dataPlanesReadAt > this.#dataPlaneCountIntervalMs) {
      this.#dataPlanesReadAt = localMs;
      this.#readDataPlaneCount().catch(() => {});
    }
  }

  async #readDataPlaneCount(): Promise<void> {
    this.#dataPlanes = await countDataPlanes(this.#db);
    // Counters of windows that ended a day ago are read by nobody.
    await purgeEndedWindows(this.#db, 86_400);
  }
}

/**
 * Learns the database's total for the counter's window. Totals only grow within a window (a
 * release is rare and only lowers what a later exchange corrects), and answers to concurrent
 * exchanges arrive in any order: the highest one seen is the newest.
 */
function noteTotal(counter: LocalCounter, reading: CounterReading): void {
  if (reading.windowStart !== counter.windowStart) return;
  counter.read = true;
  if (reading.calls > counter.known) counter.known = reading.calls;
}

function keyOf(call: LimitCall, limit: CompiledLimit): CounterKey {
  const { per, limitId, windowSeconds } = limit.limit;
  return {
    tenantId: call.tenantId,
    limitId,
    agentId: per === 'TENANT' ? '' : call.agentId,
    toolName: per === 'AGENT_TOOL' ? call.toolName : '',
    windowSeconds,
  };
}

function hitOf(
  limit: CompiledLimit,
  used: number,
  max: number,
  requested: number,
  nowSeconds: number,
): LimitHit {
  const { windowSeconds } = limit.limit;
  const retryAfterSeconds = secondsToReset(nowSeconds, windowSeconds);
  const resetsAt = (windowStartOf(nowSeconds, windowSeconds) + windowSeconds) * 1000;
  return {
    limitId: limit.limit.limitId,
    per: limit.limit.per,
    windowSeconds,
    used,
    max,
    requested,
    resetsAt: new Date(resetsAt).toISOString(),
    retryAfterSeconds,
  };
}

/** Gives back a call counted here: still pending, or already added to the database. */
function localRelease(db: Database, counter: LocalCounter): Reservation {
  return {
    release: async () => {
      if (counter.pending > 0) {
        counter.pending -= 1;
        return;
      }
      await releaseUsage(db, counter.key, counter.windowStart, '0');
    },
  };
}

async function releaseAll(reservations: readonly Reservation[]): Promise<void> {
  await Promise.allSettled(reservations.map((reservation) => reservation.release()));
}
