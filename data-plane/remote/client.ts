// The data plane's end of the configuration stream (docs/config-push.md). It starts from the
// snapshot persisted by the last run (so it serves at once even when the control plane is away),
// then connects to the control plane's config stream and applies each snapshot to the store:
// applied → persisted (temp + rename) and acknowledged; rejected (does not compile) → logged, the
// last good one keeps serving. A lost connection is retried with exponential backoff and jitter
// (capped at 5 s) and resumes from the applied version; a stream silent for longer than three
// heartbeats is treated as lost.
//
// Kills (docs/config-push.md, "Deltas: kills") are applied the moment their event is parsed and
// acknowledged at once, never queued behind a snapshot's persistence. The client keeps a kill
// cursor (the highest kill applied or included in an applied snapshot) and resumes with it, so
// the control plane first sends every kill it missed, then a heartbeat: only then is the stream
// `live` again. Until then (`uncertain`), or once nothing has arrived for three heartbeats
// (`stale`), the kill guard (kill-guard.ts) reads the kill table before a request is served.
//
// Revocation and start-up (docs/config-push.md, "Revocation", "Start-up"): a control plane that
// refuses the credential (401: revoked, unknown, or not this data plane's name) makes the client
// `refused` until a connection is accepted again; it says so in one log line, whatever the number
// of attempts. `waitForCurrent` resolves once the control plane's current configuration is applied
// (a snapshot event, or the catch-up heartbeat of the epoch the applied snapshot came from), so a
// starting data plane decides nothing on an older persisted snapshot while the current one is a
// connect away.
//
// Decision counts (decisionStats): after each heartbeat the client drains the data plane's
// decision tally and posts it on the ack endpoint (`{ decisions, report_id }`), one report at a
// time. A report without a 200 may have been written all the same (the answer was lost, or came
// too late): it is sent again unchanged, under its id, at the next heartbeat, and the control
// plane writes an id once (metrics/decision-reports.ts); one refused as malformed (400) is
// dropped.
import type { Logger } from 'pino';
import { request } from 'undici';
import {
  type AgentKillDelta,
  CONFIG_STREAM_PATH,
  DATA_PLANE_ACK_PATH,
  type DecisionReport,
  HEARTBEAT_EVENT,
  HEARTBEAT_INTERVAL_MS,
  KILL_EVENT,
  PUBLIC_URL_HEADER,
  SNAPSHOT_EVENT,
} from '../../shared/config-stream/protocol.js';
import { MAX_DECISION_REPORT_ROWS } from '../../shared/decisions/decision-counts.js';
import { type GatewayError, gatewayError } from '../../shared/errors/index.js';
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';
import { DecisionReports } from '../metrics/decision-reports.js';
import type { DecisionTally } from '../metrics/decision-tally.js';
import type { SnapshotApplyResult } from '../store/snapshot-store.js';
import { SseParser } from '../upstream/sse-parser.js';
import { loadSnapshot, saveSnapshot } from './persistence.js';

export interface ConfigStreamClientOptions {
  /** Base URL of the control plane, e.g. http://10.0.0.5:8080. */
  readonly controlPlaneUrl: string;
  /** `agdp_<id>_<secret>`. */
  readonly credential: string;
  /** This data plane's registered name (checked by the control plane when given). */
  readonly name?: string | undefined;
  readonly apply: (snapshot: ConfigSnapshot) => SnapshotApplyResult;
  /**
   * Applies a kill delta (data-plane/kill/apply-kill.ts). Without it the client neither asks
   * for kills nor applies them.
   */
  readonly applyKill?: (delta: AgentKillDelta) => { applied: boolean; aborted: number };
  /**
   * This data plane's public URL (AGENT_GATEWAY_PUBLIC_URL). When the control plane names another
   * one (PUBLIC_URL_HEADER), nothing from the stream is applied, the client stops and `onFatal`
   * is called: serving under another URL means tokens other processes refuse. Unset: not checked.
   */
  readonly publicUrl?: string | undefined;
  /** Called once when the client stops for good (a public-URL mismatch); the process exits. */
  readonly onFatal?: (error: GatewayError) => void;
  /** The decision tally reported after each heartbeat; without it nothing is reported. */
  readonly decisions?: Pick<DecisionTally, 'size' | 'drain' | 'restore'> | undefined;
  /** The control plane's heartbeat period; stale after three of them. Default 15 s. */
  readonly heartbeatMs?: number;
  /** Where the last good snapshot is kept. */
  readonly snapshotFile: string;
  readonly logger: Logger;
  readonly userAgent?: string;
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** No byte from the control plane for this long → reconnect. Default three heartbeats. */
  readonly idleTimeoutMs?: number;
  /** Largest accepted event (a snapshot) in bytes. */
  readonly maxEventBytes?: number;
}

/** How a wait for the current configuration ended. */
export type CurrentOutcome = 'current' | 'refused' | 'unreachable';

/**
 * `live`: connected, caught up, a byte within three heartbeats. `uncertain`: not connected or not
 * caught up yet, but heard from within three heartbeats. `stale`: silent for three heartbeats.
 */
export type StreamFreshness = 'live' | 'uncertain' | 'stale';

export class ConfigStreamClient {
  readonly #options: ConfigStreamClientOptions;
  readonly #logger: Logger;
  #version = 0;
  #epoch = '';
  #stopped = false;
  #abort: AbortController | undefined;
  #running: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #persisting: Promise<void> = Promise.resolve();
  #lastProblem = '';
  #killCursor = 0;
  /** performance.now() of the last byte from the control plane (or of the start). */
  #heardAt = performance.now();
  /** Connected and past the catch-up of the current connection. */
  #caughtUp = false;
  /** A decision report is on its way (one at a time). */
  #reporting: Promise<void> | undefined;
  /** What the decision tally reports next (none without a tally). */
  readonly #decisionReports: DecisionReports | undefined;
  readonly #staleAfterMs: number;
  /** The control plane refused the credential on the last attempt (revoked, unknown, wrong). */
  #refused = false;
  #connected = false;
  /** The control plane's current configuration was applied (since this client started). */
  #current = false;
  readonly #currentWaiters = new Set<(outcome: CurrentOutcome) => void>();

  constructor(options: ConfigStreamClientOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#staleAfterMs = 3 * (options.heartbeatMs ?? HEARTBEAT_INTERVAL_MS);
    this.#decisionReports =
      options.decisions && new DecisionReports(options.decisions, MAX_DECISION_REPORT_ROWS);
  }

  /** The control plane refused the credential and has not accepted it since: revoked. */
  get refused(): boolean {
    return this.#refused;
  }

  /** A stream to the control plane is open. */
  get connected(): boolean {
    return this.#connected;
  }

  /** Milliseconds since the last byte from the control plane (or since the client was made). */
  get silentMs(): number {
    return performance.now() - this.#heardAt;
  }

  /** Milliseconds of silence after which the stream is stale (three heartbeats). */
  get staleAfterMs(): number {
    return this.#staleAfterMs;
  }

  /**
   * Resolves `current` once the control plane's current configuration is applied, `refused` when
   * the control plane refuses the credential, `unreachable` after `timeoutMs` (never without it).
   */
  waitForCurrent(timeoutMs?: number): Promise<CurrentOutcome> {
    if (this.#current) return Promise.resolve('current');
    return new Promise((resolve) => {
      const finish = (outcome: CurrentOutcome) => {
        clearTimeout(timer);
        this.#currentWaiters.delete(finish);
        resolve(outcome);
      };
      const timer =
        timeoutMs === undefined ? undefined : setTimeout(() => finish('unreachable'), timeoutMs);
      this.#currentWaiters.add(finish);
    });
  }

  /** The highest kill seq this data plane applied or holds in its snapshot. */
  get killCursor(): number {
    return this.#killCursor;
  }

  get freshness(): StreamFreshness {
    if (performance.now() - this.#heardAt > this.#staleAfterMs) return 'stale';
    return this.#caughtUp ? 'live' : 'uncertain';
  }

  /**
   * Applies kill deltas read elsewhere (the kill guard, the start-up read), in order, and moves
   * the cursor past them. Returns how many executions they aborted.
   */
  applyKills(deltas: readonly AgentKillDelta[]): number {
    let aborted = 0;
    for (const delta of deltas) aborted += this.#applyKill(delta, 'table').aborted;
    return aborted;
  }

  /** The snapshot version this data plane applied last (0: none yet). */
  get version(): number {
    return this.#version;
  }

  /**
   * Applies the persisted snapshot to the store, if any (compiled, ready to serve); true when the
   * data plane can serve from it. Whether it does is the caller's decision (start-up wait).
   */
  async loadPersisted(): Promise<boolean> {
    const persisted = await loadSnapshot(this.#options.snapshotFile, this.#logger);
    if (!persisted) return false;
    const result = this.#options.apply(persisted.snapshot);
    if (!result.applied) {
      this.#logger.warn(
        { version: result.version, reason: result.reason },
        'persisted snapshot rejected; ignored',
      );
      return false;
    }
    this.#version = result.version;
    this.#epoch = persisted.epoch;
    this.#advanceKillCursor(persisted.snapshot.killsThrough);
    this.#logger.info(
      { version: result.version, killsThrough: this.#killCursor },
      'persisted snapshot loaded; it serves only if the control plane is not reached in time',
    );
    return true;
  }

  /** Connects and keeps reconnecting until `stop()`. */
  start(): void {
    this.#running ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort?.abort();
    this.#wake?.();
    await this.#running;
    await this.#persisting;
    await this.#reporting;
  }

  /**
   * Posts the report the control plane has not confirmed, else the decisions counted since the
   * last one; nothing while a report is on its way.
   */
  #reportDecisions(): void {
    const reports = this.#decisionReports;
    if (!reports || this.#reporting) return;
    const report = reports.next();
    if (report === undefined) return;
    const body: DecisionReport = { decisions: report.rows, report_id: report.id };
    this.#reporting = this.#post(body, 'decision report')
      .then((status) => {
        // 200: written, now or by an earlier delivery; 400: malformed, never will be.
        reports.settle(report, status === 200 || status === 400);
      })
      .finally(() => {
        this.#reporting = undefined;
      });
  }

  async #run(): Promise<void> {
    let attempt = 0;
    while (!this.#stopped) {
      const abort = new AbortController();
      this.#abort = abort;
      try {
        const connected = await this.#connect(abort.signal, () => {
          attempt = 0;
        });
        // A refusal said so already: "ended" would make every retry log twice.
        if (connected && !this.#stopped) {
          this.#problem('config stream ended by the control plane', 'warn', {});
        }
      } catch (error) {
        if (this.#stopped) break;
        this.#problem('config stream connection failed', 'warn', {
          reason: (error as Error).message,
        });
      }
      if (this.#stopped) break;
      await this.#sleep(computeBackoffMs(attempt++, this.#options));
    }
  }

  /** One connection, until it ends; false when the control plane refused it or names another public URL. */
  async #connect(signal: AbortSignal, onConnected: () => void): Promise<boolean> {
    const url = new URL(CONFIG_STREAM_PATH, this.#options.controlPlaneUrl);
    url.searchParams.set('since', String(this.#version));
    if (this.#epoch) url.searchParams.set('epoch', this.#epoch);
    if (this.#options.name) url.searchParams.set('name', this.#options.name);
    if (this.#options.applyKill) url.searchParams.set('kills', String(this.#killCursor));
    const idleTimeoutMs = this.#options.idleTimeoutMs ?? this.#staleAfterMs;
    this.#caughtUp = false;
    const response = await request(url, {
      method: 'GET',
      headers: {
        accept: 'text/event-stream',
        authorization: `Bearer ${this.#options.credential}`,
        'user-agent': this.#options.userAgent ?? 'agent-gateway-data-plane',
      },
      signal,
      headersTimeout: 10_000,
      bodyTimeout: idleTimeoutMs,
    });
    if (response.statusCode !== 200) {
      const text = await response.body.text().catch(() => '');
      if (response.statusCode === 401) this.#onRefused();
      else {
        this.#problem('config stream refused', 'warn', {
          status: response.statusCode,
          body: text.slice(0, 300),
        });
      }
      return false;
    }
    const mismatch = this.#checkPublicUrl(response.headers[PUBLIC_URL_HEADER]);
    if (mismatch) {
      // Not dump(): the stream does not end, dump would wait for it.
      response.body.destroy();
      this.#stopped = true;
      this.#options.onFatal?.(mismatch);
      return false;
    }
    onConnected();
    this.#connected = true;
    if (this.#refused) {
      this.#refused = false;
      this.#logger.warn('control plane accepts the data-plane credential again; deciding again');
    }
    this.#heardAt = performance.now();
    // Without kills there is no catch-up to wait for.
    if (!this.#options.applyKill) this.#caughtUp = true;
    this.#lastProblem = '';
    this.#logger.info({ url: url.origin, since: this.#version }, 'config stream connected');
    const maxEventBytes = this.#options.maxEventBytes ?? 256 * 1024 * 1024;
    let pendingBytes = 0;
    const parser = new SseParser((event) => {
      pendingBytes = 0;
      if (event.event === KILL_EVENT) this.#onKill(event.data);
      else if (event.event === SNAPSHOT_EVENT) {
        this.#onSnapshot(event.data, event.id);
        this.#caughtUp = true;
      } else if (event.event === HEARTBEAT_EVENT) {
        this.#caughtUp = true;
        if (heartbeatEpoch(event.data) === this.#epoch) this.#markCurrent();
        this.#reportDecisions();
      }
      return undefined;
    });
    try {
      for await (const chunk of response.body) {
        this.#heardAt = performance.now();
        pendingBytes += (chunk as Buffer).length;
        if (pendingBytes > maxEventBytes) {
          throw new Error(`an event exceeds ${maxEventBytes} bytes`);
        }
        parser.push(chunk as Buffer);
      }
    } finally {
      this.#caughtUp = false;
      this.#connected = false;
    }
    parser.end();
    return true;
  }

  /**
   * The control plane refused the credential: this data plane is revoked (or was never this
   * name's). One error line for the whole refusal, however often the retries are refused; each
   * repeat is logged at debug level with the same message.
   */
  #onRefused(): void {
    const fields = {
      reasonCode: 'DATA_PLANE_CREDENTIAL_INVALID',
      status: 401,
      refusing: 'DATA_PLANE_REVOKED',
    };
    if (!this.#refused) {
      this.#refused = true;
      this.#logger.error(fields, REFUSED_MESSAGE);
    } else this.#logger.debug(fields, REFUSED_MESSAGE);
    for (const waiter of [...this.#currentWaiters]) waiter('refused');
  }

  #markCurrent(): void {
    this.#current = true;
    for (const waiter of [...this.#currentWaiters]) waiter('current');
  }

  /** The error when the control plane's public URL is not this data plane's; logged once. */
  #checkPublicUrl(header: string | string[] | undefined): GatewayError | undefined {
    const local = this.#options.publicUrl;
    if (local === undefined) return undefined;
    const remote = typeof header === 'string' ? header : undefined;
    // A control plane that does not say (an older version) is not contradicted.
    if (remote === undefined || sameBaseUrl(remote, local)) return undefined;
    const error = gatewayError('DATA_PLANE_PUBLIC_URL_MISMATCH', {
      local,
      controlPlane: remote,
    });
    this.#logger.error(
      { reasonCode: error.code, publicUrl: local, controlPlanePublicUrl: remote },
      error.message,
    );
    return error;
  }

  #onKill(data: string): void {
    const delta = parseKillDelta(data);
    if (!delta) {
      this.#logger.warn('kill event is not a kill delta; ignored');
      return;
    }
    if (!this.#options.applyKill) return;
    const { aborted } = this.#applyKill(delta, 'stream');
    // At once and on its own: the control plane is waiting for it (bounded) to answer the kill.
    void this.#acknowledge({ kill: delta.seq, aborted }, 'kill');
  }

  #applyKill(
    delta: AgentKillDelta,
    source: 'stream' | 'table',
  ): { applied: boolean; aborted: number } {
    const result = this.#options.applyKill?.(delta) ?? { applied: false, aborted: 0 };
    this.#advanceKillCursor(delta.seq);
    // Every kill the stream brings is logged (kills are rare); a table read logs what was new.
    if (source === 'stream' || result.applied || result.aborted > 0) {
      this.#logger.info(
        {
          seq: delta.seq,
          agentId: delta.agentId,
          applied: result.applied,
          aborted: result.aborted,
          source,
        },
        'kill delta applied',
      );
    }
    return result;
  }

  #advanceKillCursor(seq: number | undefined): void {
    if (seq !== undefined && Number.isSafeInteger(seq) && seq > this.#killCursor) {
      this.#killCursor = seq;
    }
  }

  #onSnapshot(data: string, id: string): void {
    let snapshot: ConfigSnapshot;
    try {
      snapshot = JSON.parse(data) as ConfigSnapshot;
    } catch (error) {
      this.#logger.warn(
        { reason: (error as Error).message },
        'snapshot event is not JSON; ignored',
      );
      return;
    }
    if (!snapshot || typeof snapshot !== 'object' || !Number.isSafeInteger(snapshot.version)) {
      this.#logger.warn('snapshot event without a version; ignored');
      return;
    }
    const epoch = /^([0-9a-f]{1,32}):\d+$/.exec(id)?.[1] ?? '';
    const result = this.#options.apply(snapshot);
    // The control plane's current version: applied, or refused and the last good one kept (the
    // same rules as any later snapshot).
    this.#markCurrent();
    if (!result.applied) {
      if (snapshot.version > this.#version) {
        this.#logger.warn(
          { version: snapshot.version, reason: result.reason },
          'snapshot rejected; keeping the last good one',
        );
      }
      return;
    }
    this.#version = result.version;
    this.#epoch = epoch;
    this.#advanceKillCursor(snapshot.killsThrough);
    this.#logger.info(
      { version: result.version, compileMs: Math.round(result.compileMs * 100) / 100 },
      'snapshot applied',
    );
    // Persist what is served (a held-back tenant's last good configuration, not the one it
    // refused) and acknowledge, in order, off the stream's path: the next event need not wait.
    const served = result.served;
    this.#persisting = this.#persisting.then(() => this.#persistAndAck(served, epoch));
  }

  async #persistAndAck(snapshot: ConfigSnapshot, epoch: string): Promise<void> {
    if (snapshot.version !== this.#version) return; // a newer one arrived meanwhile
    try {
      await saveSnapshot(this.#options.snapshotFile, { epoch, snapshot });
    } catch (error) {
      this.#logger.error(
        { file: this.#options.snapshotFile, err: error },
        'cannot persist the snapshot',
      );
    }
    await this.#acknowledge({ version: snapshot.version }, 'snapshot');
  }

  async #acknowledge(
    body: { version: number } | { kill: number; aborted: number },
    what: 'snapshot' | 'kill',
  ): Promise<void> {
    await this.#post(body, `${what} acknowledgement`);
  }

  /** POSTs `body` to the ack endpoint; the status, or 0 when no answer came. Never throws. */
  async #post(
    body: { version: number } | { kill: number; aborted: number } | DecisionReport,
    what: string,
  ): Promise<number> {
    try {
      const response = await request(new URL(DATA_PLANE_ACK_PATH, this.#options.controlPlaneUrl), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.#options.credential}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      await response.body.dump();
      if (response.statusCode !== 200) {
        this.#logger.warn({ status: response.statusCode }, `${what} refused`);
      }
      return response.statusCode;
    } catch (error) {
      this.#logger.warn({ reason: (error as Error).message }, `${what} failed`);
      return 0;
    }
  }

  /** Logs a connection problem at `level` when it is new, at debug while it repeats. */
  #problem(message: string, level: 'warn' | 'error', details: Record<string, unknown>): void {
    const key = `${message} ${JSON.stringify(details)}`;
    const repeated = key === this.#lastProblem;
    this.#lastProblem = key;
    this.#logger[repeated ? 'debug' : level](details, message);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

const REFUSED_MESSAGE =
  'control plane refused the data-plane credential: revoked; refusing every governed request';

/** The epoch a heartbeat names (undefined from a control plane that names none). */
function heartbeatEpoch(data: string): string | undefined {
  try {
    const epoch = (JSON.parse(data) as { epoch?: unknown } | null)?.epoch;
    return typeof epoch === 'string' && epoch !== '' ? epoch : undefined;
  } catch {
    return undefined;
  }
}

/** Two base URLs name the same origin and path (a trailing slash and letter case of the host aside). */
function sameBaseUrl(a: string, b: string): boolean {
  const normalize = (text: string) => {
    const url = URL.canParse(text) ? new URL(text).href : text;
    return url.endsWith('/') ? url.slice(0, -1) : url;
  };
  return normalize(a) === normalize(b);
}

/** A kill event's data as a delta, or undefined when it is not one. */
export function parseKillDelta(data: string): AgentKillDelta | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  const delta = value as Partial<AgentKillDelta> | null;
  if (
    !delta ||
    typeof delta !== 'object' ||
    !Number.isSafeInteger(delta.seq) ||
    (delta.seq as number) < 1 ||
    typeof delta.killId !== 'string' ||
    typeof delta.tenantId !== 'string' ||
    typeof delta.agentId !== 'string' ||
    typeof delta.publicKey !== 'string' ||
    typeof delta.killedAt !== 'string' ||
    !Array.isArray(delta.statusLists)
  ) {
    return undefined;
  }
  return delta as AgentKillDelta;
}

/** Exponential backoff with full jitter on the upper half: 100 ms, 200 ms, … capped at 5 s. */
export function computeBackoffMs(
  attempt: number,
  options: { initialBackoffMs?: number; maxBackoffMs?: number } = {},
): number {
  const initial = options.initialBackoffMs ?? 100;
  const cap = options.maxBackoffMs ?? 5000;
  const ceiling = Math.min(cap, initial * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
