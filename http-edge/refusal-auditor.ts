// Writes refusals to the audit trail, bounded (docs/audit.md, "Refusals"; docs/security.md,
// "Refusal auditing"): the first refusal of a subject (API key, OAuth client, agent, address) and
// reason code in a minute is an `auth.refused` entry of its own, durable before `refuse`
// resolves; the rest of that minute become one `auth.refused_summary` entry with their count,
// written when the minute ends (a timer, or the next refusal after it) and, for windows still
// open, at `close`. The windowing itself is pure (shared/audit/refusal-windows.ts).
//
// Never throws: a refusal is answered whatever the trail does. A write that fails is logged at
// error level with what it held (for a summary, its count), so no count is lost silently.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import {
  AUDIT_ACTIONS,
  type EndedRefusalWindow,
  type JsonObject,
  type Refusal,
  type RefusalSubjectType,
  RefusalWindows,
} from '../shared/audit/index.js';
import type { AuditWriter } from '../storage/tables/audit-writer.js';

export interface RefusalAuditorOptions {
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly logger: Pick<Logger, 'error'>;
  /** Clock in epoch ms (default Date.now); tests move it past a window instead of waiting. */
  readonly now?: (() => number) | undefined;
  /** Window length (default one minute). */
  readonly windowMs?: number | undefined;
  /** Most windows open at once (default 10 000). */
  readonly maxWindows?: number | undefined;
}

/** What the refused caller was, in the entry's `actorType`. */
const ACTOR_TYPES: Readonly<Record<RefusalSubjectType, string>> = {
  api_key: 'operator',
  oauth_client: 'agent',
  agent: 'agent',
  address: 'agent',
};

export class RefusalAuditor {
  readonly #audit: Pick<AuditWriter, 'append'>;
  readonly #logger: Pick<Logger, 'error'>;
  readonly #now: () => number;
  readonly #windows: RefusalWindows;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #closed = false;
  /** Summary writes under way (close waits for them). */
  readonly #writing = new Set<Promise<void>>();

  constructor(options: RefusalAuditorOptions) {
    this.#audit = options.audit;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#windows = new RefusalWindows({
      windowMs: options.windowMs,
      maxWindows: options.maxWindows,
      newId: randomUUID,
    });
  }

  /**
   * Audits one refusal. Resolves with the id of its entry when it was the first of its window
   * (once that entry is durable), undefined when it was counted in a summary; never rejects.
   */
  async refuse(refusal: Refusal): Promise<string | undefined> {
    if (this.#closed) {
      this.#logger.error({ refusal }, 'refusal after the refusal auditor closed: not audited');
      return undefined;
    }
    const now = this.#now();
    const verdict = this.#windows.record(refusal, now);
    this.#writeEnded(this.#windows.takeEnded(now));
    this.#arm();
    if (verdict.kind === 'counted') return undefined;
    try {
      const entry = await this.#audit.append({
        id: verdict.entryId,
        tenantId: refusal.tenantId,
        action: AUDIT_ACTIONS.AUTH_REFUSED,
        resourceType: refusal.subjectType,
        resourceId: refusal.subject,
        metadata: {
          actorType: ACTOR_TYPES[refusal.subjectType],
          reasonCode: refusal.code,
          subjectType: refusal.subjectType,
          subject: refusal.subject,
          route: refusal.route,
          detail: refusal.detail,
        },
      });
      return entry.id;
    } catch (error) {
      this.#logger.error({ err: error, refusal }, 'audit of a refusal failed');
      return undefined;
    }
  }

  /** Writes the summaries of the windows that have ended (the timer's job; tests call it). */
  async sweep(): Promise<void> {
    this.#writeEnded(this.#windows.takeEnded(this.#now()));
    this.#arm();
    await this.#idle();
  }

  /** Writes every summary, ended or not, and stops; call before the audit writer closes. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#writeEnded(this.#windows.takeAll());
    await this.#idle();
  }

  async #idle(): Promise<void> {
    while (this.#writing.size > 0) await Promise.all(this.#writing);
  }

  #writeEnded(ended: readonly EndedRefusalWindow[]): void {
    for (const window of ended) {
      const write = this.#audit.append(summaryEntry(window)).then(
        () => undefined,
        (error: unknown) => {
          this.#logger.error(
            { err: error, summary: window },
            `audit of ${window.count} refusals failed`,
          );
        },
      );
      this.#writing.add(write);
      void write.finally(() => this.#writing.delete(write));
    }
  }

  /** A timer for the earliest window holding a count, so it is written when it ends. */
  #arm(): void {
    if (this.#closed) return;
    const next = this.#windows.nextEnd();
    if (next === undefined || next >= this.#timerAt) return;
    clearTimeout(this.#timer);
    this.#timerAt = next;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Number.POSITIVE_INFINITY;
        void this.sweep();
      },
      Math.max(0, next - this.#now()),
    );
    this.#timer.unref();
  }
}

function summaryEntry(window: EndedRefusalWindow) {
  const timing = {
    windowStartedAt: new Date(window.windowStart).toISOString(),
    windowEndsAt: new Date(window.windowEnd).toISOString(),
    firstAt: new Date(window.firstAt).toISOString(),
    lastAt: new Date(window.lastAt).toISOString(),
  };
  if (window.kind === 'overflow') {
    const metadata: JsonObject = {
      actorType: 'system',
      overflow: true,
      count: window.count,
      reasonCodes: { ...window.codes },
      ...timing,
    };
    return {
      tenantId: window.tenantId,
      action: AUDIT_ACTIONS.AUTH_REFUSED_SUMMARY,
      resourceType: 'tenant',
      resourceId: window.tenantId,
      metadata,
    };
  }
  const metadata: JsonObject = {
    actorType: 'system',
    reasonCode: window.code,
    subjectType: window.subjectType,
    subject: window.subject,
    count: window.count,
    firstEntryId: window.firstEntryId,
    routes: [...window.routes],
    ...timing,
  };
  return {
    tenantId: window.tenantId,
    action: AUDIT_ACTIONS.AUTH_REFUSED_SUMMARY,
    resourceType: window.subjectType,
    resourceId: window.subject,
    metadata,
  };
}
