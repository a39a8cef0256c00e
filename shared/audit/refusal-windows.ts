// Bounds the audit trail of refusals (authentication, authorization and transport refusals whose
// tenant is known: docs/audit.md, "Refusals"): per (tenant, subject, reason code) the first
// refusal of a window (one minute by default) is an entry of its own, and the rest of that window
// is counted and becomes ONE summary when the window ends. An attacker repeating a refused
// request therefore writes two entries a minute per subject and code, whatever the rate.
//
// Memory is bounded too: at most `maxWindows` windows are open. When every slot is taken by a
// window that has not ended, a refusal of a new subject is folded into one overflow window of its
// tenant (a count per reason code, no entry of its own); tenants are a configured set, so the
// overflow windows are bounded by it.
//
// Pure: the caller passes the time and writes what `record` and `takeEnded` hand back. Windows
// have one length and are (re)inserted when they start, so the Map's insertion order is their end
// order: ended windows are always at its front, and finding them never scans the rest.

/** Who was refused: an API key, an OAuth client, an agent, or only a network address. */
export type RefusalSubjectType = 'api_key' | 'oauth_client' | 'agent' | 'address';

export interface RefusalSubject {
  readonly tenantId: string;
  readonly subjectType: RefusalSubjectType;
  /** The key's id, the client_id, the agent id or the address. */
  readonly subject: string;
}

export interface Refusal extends RefusalSubject {
  /** The registry reason code the refusal answered. */
  readonly code: string;
  /** `METHOD /route/:pattern` of the refused request. */
  readonly route: string;
  /** The refusal's message (what was wrong). */
  readonly detail: string;
}

/** What to do with one refusal. */
export type RefusalVerdict =
  /** The first of its window: write it as an entry of its own, with this id. */
  | { readonly kind: 'entry'; readonly entryId: string }
  /** Counted in its window's summary (or its tenant's overflow summary). */
  | { readonly kind: 'counted' };

/** The refusals of one subject and code after the first, in one ended window. */
export interface RefusalSummary extends RefusalSubject {
  readonly kind: 'summary';
  readonly code: string;
  readonly count: number;
  /** The entry of the window's first refusal. */
  readonly firstEntryId: string;
  readonly windowStart: number;
  readonly windowEnd: number;
  /** The first and last counted refusal. */
  readonly firstAt: number;
  readonly lastAt: number;
  /** The distinct routes of the counted refusals (at most MAX_SUMMARY_ROUTES). */
  readonly routes: readonly string[];
}

/** The refusals of a tenant folded while every window slot was taken. */
export interface RefusalOverflowSummary {
  readonly kind: 'overflow';
  readonly tenantId: string;
  readonly count: number;
  /** Refusals per reason code. */
  readonly codes: Readonly<Record<string, number>>;
  readonly windowStart: number;
  readonly windowEnd: number;
  readonly firstAt: number;
  readonly lastAt: number;
}

export type EndedRefusalWindow = RefusalSummary | RefusalOverflowSummary;

export interface RefusalWindowOptions {
  /** Window length in ms (default one minute). */
  readonly windowMs?: number;
  /** Most windows open at once (default 10 000). */
  readonly maxWindows?: number;
  /** Makes the id of a window's first entry (the caller's writer accepts given ids). */
  readonly newId: () => string;
}

export const DEFAULT_REFUSAL_WINDOW_MS = 60_000;
export const DEFAULT_MAX_REFUSAL_WINDOWS = 10_000;
export const MAX_SUMMARY_ROUTES = 10;

interface Window {
  readonly subject: RefusalSubject;
  readonly code: string;
  readonly firstEntryId: string;
  readonly start: number;
  count: number;
  firstAt: number;
  lastAt: number;
  routes: string[];
}

interface OverflowWindow {
  readonly tenantId: string;
  readonly start: number;
  count: number;
  readonly codes: Record<string, number>;
  firstAt: number;
  lastAt: number;
}

export class RefusalWindows {
  readonly #windowMs: number;
  readonly #maxWindows: number;
  readonly #newId: () => string;
  /** By `tenant \0 subjectType \0 subject \0 code`, in start order. */
  readonly #windows = new Map<string, Window>();
  /** By tenant, in start order. */
  readonly #overflow = new Map<string, OverflowWindow>();
  /** Windows ended by a refusal of their own key, waiting for `takeEnded`. */
  #ended: EndedRefusalWindow[] = [];

  constructor(options: RefusalWindowOptions) {
    this.#windowMs = options.windowMs ?? DEFAULT_REFUSAL_WINDOW_MS;
    this.#maxWindows = options.maxWindows ?? DEFAULT_MAX_REFUSAL_WINDOWS;
    if (!(this.#windowMs > 0) || !Number.isInteger(this.#maxWindows) || this.#maxWindows < 1) {
      throw new RangeError('RefusalWindows: windowMs and maxWindows must be positive');
    }
    this.#newId = options.newId;
  }

  /** Windows open (overflow windows included). */
  get size(): number {
    return this.#windows.size + this.#overflow.size;
  }

  record(refusal: Refusal, now: number): RefusalVerdict {
    const key = `${refusal.tenantId}\0${refusal.subjectType}\0${refusal.subject}\0${refusal.code}`;
    const open = this.#windows.get(key);
    if (open !== undefined) {
      if (now < open.start + this.#windowMs) {
        count(open, refusal.route, now);
        return { kind: 'counted' };
      }
      this.#windows.delete(key);
      this.#end(open);
    }
    if (this.#windows.size >= this.#maxWindows) this.#endBefore(now);
    if (this.#windows.size >= this.#maxWindows) {
      this.#countOverflow(refusal, now);
      return { kind: 'counted' };
    }
    const entryId = this.#newId();
    this.#windows.set(key, {
      subject: {
        tenantId: refusal.tenantId,
        subjectType: refusal.subjectType,
        subject: refusal.subject,
      },
      code: refusal.code,
      firstEntryId: entryId,
      start: now,
      count: 0,
      firstAt: now,
      lastAt: now,
      routes: [],
    });
    return { kind: 'entry', entryId };
  }

  /** The windows that ended by `now` and counted something; they are forgotten. */
  takeEnded(now: number): EndedRefusalWindow[] {
    this.#endBefore(now);
    for (const [tenantId, window] of this.#overflow) {
      if (now < window.start + this.#windowMs) break;
      this.#overflow.delete(tenantId);
      this.#ended.push(this.#overflowSummary(window));
    }
    return this.#drain();
  }

  /** Every window that counted something, ended or not (at shutdown); all are forgotten. */
  takeAll(): EndedRefusalWindow[] {
    for (const window of this.#windows.values()) this.#end(window);
    for (const window of this.#overflow.values()) this.#ended.push(this.#overflowSummary(window));
    this.#windows.clear();
    this.#overflow.clear();
    return this.#drain();
  }

  /**
   * When the earliest window holding a count ends (ms), or undefined when none holds one: when a
   * timer should call `takeEnded`. Scans the open windows; call it per timer, not per refusal.
   */
  nextEnd(): number | undefined {
    let next: number | undefined;
    // The first window holding a count is the earliest to end (start order).
    for (const window of this.#windows.values()) {
      if (window.count > 0) {
        next = window.start + this.#windowMs;
        break;
      }
    }
    for (const window of this.#overflow.values()) {
      const end = window.start + this.#windowMs;
      if (next === undefined || end < next) next = end;
      break;
    }
    return this.#ended.length > 0 ? 0 : next;
  }

  #drain(): EndedRefusalWindow[] {
    const ended = this.#ended;
    this.#ended = [];
    return ended;
  }

  /** Ends the windows at the front of the map that ended by `now`. */
  #endBefore(now: number): void {
    for (const [key, window] of this.#windows) {
      if (now < window.start + this.#windowMs) break;
      this.#windows.delete(key);
      this.#end(window);
    }
  }

  #end(window: Window): void {
    if (window.count === 0) return;
    this.#ended.push({
      kind: 'summary',
      ...window.subject,
      code: window.code,
      count: window.count,
      firstEntryId: window.firstEntryId,
      windowStart: window.start,
      windowEnd: window.start + this.#windowMs,
      firstAt: window.firstAt,
      lastAt: window.lastAt,
      routes: window.routes,
    });
  }

  #countOverflow(refusal: Refusal, now: number): void {
    let window = this.#overflow.get(refusal.tenantId);
    if (window !== undefined && now >= window.start + this.#windowMs) {
      this.#overflow.delete(refusal.tenantId);
      this.#ended.push(this.#overflowSummary(window));
      window = undefined;
    }
    if (window === undefined) {
      window = {
        tenantId: refusal.tenantId,
        start: now,
        count: 0,
        codes: {},
        firstAt: now,
        lastAt: now,
      };
      this.#overflow.set(refusal.tenantId, window);
    }
    if (window.count === 0) window.firstAt = now;
    window.count++;
    window.lastAt = now;
    window.codes[refusal.code] = (window.codes[refusal.code] ?? 0) + 1;
  }

  #overflowSummary(window: OverflowWindow): RefusalOverflowSummary {
    return {
      kind: 'overflow',
      tenantId: window.tenantId,
      count: window.count,
      codes: window.codes,
      windowStart: window.start,
      windowEnd: window.start + this.#windowMs,
      firstAt: window.firstAt,
      lastAt: window.lastAt,
    };
  }
}

function count(window: Window, route: string, now: number): void {
  if (window.count === 0) window.firstAt = now;
  window.count++;
  window.lastAt = now;
  if (window.routes.length < MAX_SUMMARY_ROUTES && !window.routes.includes(route)) {
    window.routes.push(route);
  }
}
