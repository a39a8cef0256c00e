// The data plane's end of the configuration stream (docs/config-push.md). It starts from the
// snapshot persisted by the last run (so it serves at once even when the control plane is away),
// then connects to the control plane's config stream and applies each snapshot to the store:
// applied → persisted (temp + rename) and acknowledged; rejected (does not compile) → logged, the
// last good one keeps serving. A lost connection is retried with exponential backoff and jitter
// (capped at 5 s) and resumes from the applied version; a stream silent for longer than three
// heartbeats is treated as lost.
import type { Logger } from 'pino';
import { request } from 'undici';
import {
  CONFIG_STREAM_PATH,
  DATA_PLANE_ACK_PATH,
  SNAPSHOT_EVENT,
} from '../../shared/config-stream/protocol.js';
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';
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
  /** Where the last good snapshot is kept. */
  readonly snapshotFile: string;
  readonly logger: Logger;
  readonly userAgent?: string;
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** No byte from the control plane for this long → reconnect. Default 45 s (3 heartbeats). */
  readonly idleTimeoutMs?: number;
  /** Largest accepted event (a snapshot) in bytes. */
  readonly maxEventBytes?: number;
}

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

  constructor(options: ConfigStreamClientOptions) {
    this.#options = options;
    this.#logger = options.logger;
  }

  /** The snapshot version this data plane applied last (0: none yet). */
  get version(): number {
    return this.#version;
  }

  /** Applies the persisted snapshot, if any; true when the data plane can serve from it. */
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
    this.#logger.info({ version: result.version }, 'serving the persisted snapshot');
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
  }

  async #run(): Promise<void> {
    let attempt = 0;
    while (!this.#stopped) {
      const abort = new AbortController();
      this.#abort = abort;
      try {
        await this.#connect(abort.signal, () => {
          attempt = 0;
        });
        if (!this.#stopped) this.#problem('config stream ended by the control plane', 'warn', {});
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

  async #connect(signal: AbortSignal, onConnected: () => void): Promise<void> {
    const url = new URL(CONFIG_STREAM_PATH, this.#options.controlPlaneUrl);
    url.searchParams.set('since', String(this.#version));
    if (this.#epoch) url.searchParams.set('epoch', this.#epoch);
    if (this.#options.name) url.searchParams.set('name', this.#options.name);
    const idleTimeoutMs = this.#options.idleTimeoutMs ?? 45_000;
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
      if (response.statusCode === 401) {
        this.#problem('control plane refused the data-plane credential', 'error', {
          reasonCode: 'DATA_PLANE_CREDENTIAL_INVALID',
          status: 401,
        });
      } else {
        this.#problem('config stream refused', 'warn', {
          status: response.statusCode,
          body: text.slice(0, 300),
        });
      }
      return;
    }
    onConnected();
    this.#lastProblem = '';
    this.#logger.info({ url: url.origin, since: this.#version }, 'config stream connected');
    const maxEventBytes = this.#options.maxEventBytes ?? 256 * 1024 * 1024;
    let pendingBytes = 0;
    const parser = new SseParser((event) => {
      pendingBytes = 0;
      if (event.event === SNAPSHOT_EVENT) this.#onSnapshot(event.data, event.id);
      return undefined;
    });
    for await (const chunk of response.body) {
      pendingBytes += (chunk as Buffer).length;
      if (pendingBytes > maxEventBytes) {
        throw new Error(`an event exceeds ${maxEventBytes} bytes`);
      }
      parser.push(chunk as Buffer);
    }
    parser.end();
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
    try {
      const response = await request(new URL(DATA_PLANE_ACK_PATH, this.#options.controlPlaneUrl), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.#options.credential}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ version: snapshot.version }),
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      await response.body.dump();
      if (response.statusCode !== 200) {
        this.#logger.warn({ status: response.statusCode }, 'snapshot acknowledgement refused');
      }
    } catch (error) {
      this.#logger.warn({ reason: (error as Error).message }, 'snapshot acknowledgement failed');
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
