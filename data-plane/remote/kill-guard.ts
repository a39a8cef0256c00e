// The kill guard of a remote data plane (DESIGN.md §6a): while its configuration stream is not
// known to be live, a kill may be committed that this data plane has not heard of. So every
// request then waits for a read of the kill table that STARTED AFTER the request arrived, and
// whatever that read finds is applied before the request goes on. Concurrent requests share one
// read (at most one in flight and one queued behind it), so a burst costs two queries, not one per
// request. While the stream is live the guard costs one comparison.
//
// When the read fails: a stream merely reconnecting (`uncertain`, heard from within three
// heartbeats) serves from its last state, as it would have had the delta simply been late. A
// stream silent for three heartbeats (`stale`) fails closed: with neither the control plane nor
// PostgreSQL confirming, the data plane cannot tell a killed agent from a live one, and the kill
// switch promises that no data plane lets a killed agent act after the kill answer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AgentKillDelta } from '../../shared/config-stream/protocol.js';
import { gatewayError } from '../../shared/errors/index.js';
import type { StreamFreshness } from './client.js';

export interface KillGuardOptions {
  readonly freshness: () => StreamFreshness;
  /** The kill cursor: kills after it are read. */
  readonly cursor: () => number;
  /** Reads the kills after a cursor (storage/tables/kill-deltas.ts). */
  readonly readKills: (after: number) => Promise<readonly AgentKillDelta[]>;
  /** Applies what a read found, in order, and moves the cursor. */
  readonly applyKills: (deltas: readonly AgentKillDelta[]) => void;
  readonly logger: Logger;
  /** A read taking longer than this counts as failed. Default 2000 ms. */
  readonly readTimeoutMs?: number;
}

/** Paths a probe or scraper calls without acting for any agent. */
export const UNGUARDED_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

export class KillGuard {
  readonly #options: KillGuardOptions;
  #inFlight: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  /** Reads done (tests and logs). */
  reads = 0;

  constructor(options: KillGuardOptions) {
    this.#options = options;
  }

  /** Resolves when the request may be served; rejects (fail closed) when it may not. */
  async check(): Promise<void> {
    const freshness = this.#options.freshness();
    if (freshness === 'live') return;
    try {
      await this.readAfterNow();
    } catch (error) {
      if (this.#options.freshness() === 'live') return; // the stream came back meanwhile
      if (freshness === 'stale') {
        this.#options.logger.error(
          { reason: (error as Error).message },
          'kill table unreadable and the configuration stream stale; refusing requests',
        );
        throw gatewayError('KILL_STATE_UNCONFIRMED', undefined, { cause: error });
      }
      this.#options.logger.warn(
        { reason: (error as Error).message },
        'kill table unreadable while the configuration stream reconnects; serving the last state',
      );
    }
  }

  /** A read of the kill table that starts now or after the one in flight; applies what it finds. */
  readAfterNow(): Promise<void> {
    if (!this.#inFlight) return this.#start();
    this.#queued ??= this.#inFlight
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        this.#queued = undefined;
        return this.#start();
      });
    return this.#queued;
  }

  /** Installs the guard in front of every route but health and metrics. */
  install(app: FastifyInstance): void {
    app.addHook(
      'onRequest',
      (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
        // The hot path: a live stream costs this comparison and no promise.
        if (
          this.#options.freshness() === 'live' ||
          UNGUARDED_PATHS.has(request.url.split('?')[0] ?? '')
        ) {
          done();
          return;
        }
        this.check().then(() => done(), done);
      },
    );
  }

  #start(): Promise<void> {
    const read = this.#read().finally(() => {
      if (this.#inFlight === read) this.#inFlight = undefined;
    });
    this.#inFlight = read;
    return read;
  }

  async #read(): Promise<void> {
    const timeoutMs = this.#options.readTimeoutMs ?? 2000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const deltas = await Promise.race([
        this.#options.readKills(this.#options.cursor()),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`kill table read took more than ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
      this.reads++;
      if (deltas.length > 0) this.#options.applyKills(deltas);
    } finally {
      clearTimeout(timer);
    }
  }
}
