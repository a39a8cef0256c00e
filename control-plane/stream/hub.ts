// Fans configuration snapshots out to the data planes connected to the configuration stream.
// It is one more sink of the snapshot publisher: each new version is serialized ONCE (lazily,
// when someone listens) and the same string is written to every client.
//
// Versions are monotonic per control-plane process; `epoch` names that process. A client resumes
// with the version and epoch it applied last: same epoch and not older → nothing to send; an
// older version → the current snapshot; a version from another epoch that is not older than the
// current one (the control plane restarted and counts from 1 again) → the publisher is asked to
// build above it (`onBehind`), and that build reaches every client.
import { randomBytes } from 'node:crypto';
import {
  HEARTBEAT_EVENT,
  HEARTBEAT_INTERVAL_MS,
  SNAPSHOT_EVENT,
} from '../../shared/config-stream/protocol.js';
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';
import type { SnapshotSink } from '../snapshot/publisher.js';
import { formatSseEvent } from './sse.js';

/** One connected data plane, as the hub sees it. */
export interface StreamClient {
  /** Writes text to the client's response. */
  send(text: string): void;
  /** Bytes written but not yet flushed to the socket. */
  backlog(): number;
  /** Ends the response (the client reconnects and resumes). */
  end(): void;
}

export interface ConfigStreamHubOptions {
  readonly heartbeatMs?: number;
  /** A client that buffers more than this many bytes is disconnected (it resumes later). */
  readonly maxBacklogBytes?: number;
  /** Called when a client resumes from another epoch with a version not older than ours. */
  readonly onBehind?: (version: number) => void;
}

export class ConfigStreamHub implements SnapshotSink {
  readonly epoch = randomBytes(8).toString('hex');
  /** Each client with the version and epoch it holds (updated as versions are sent). */
  readonly #clients = new Map<StreamClient, { since: number; epoch: string }>();
  readonly #maxBacklogBytes: number;
  readonly #onBehind: ((version: number) => void) | undefined;
  readonly #heartbeat: NodeJS.Timeout;
  #snapshot: ConfigSnapshot | undefined;
  #event: string | undefined;

  constructor(options: ConfigStreamHubOptions = {}) {
    this.#maxBacklogBytes = options.maxBacklogBytes ?? 64 * 1024 * 1024;
    this.#onBehind = options.onBehind;
    this.#heartbeat = setInterval(
      () => this.#sendHeartbeat(),
      options.heartbeatMs ?? HEARTBEAT_INTERVAL_MS,
    );
    this.#heartbeat.unref();
  }

  get version(): number {
    return this.#snapshot?.version ?? 0;
  }

  get clients(): number {
    return this.#clients.size;
  }

  apply(snapshot: ConfigSnapshot): { applied: boolean; version: number } {
    if (this.#snapshot && snapshot.version <= this.#snapshot.version) {
      return { applied: false, version: snapshot.version };
    }
    this.#snapshot = snapshot;
    this.#event = undefined;
    let ahead = 0;
    for (const [client, held] of this.#clients) {
      if (held.epoch !== this.epoch && held.since >= snapshot.version) {
        // It holds a version from an earlier control-plane process this one has not passed yet.
        ahead = Math.max(ahead, held.since);
        continue;
      }
      this.#send(client, this.#currentEvent() as string);
      held.since = snapshot.version;
      held.epoch = this.epoch;
    }
    if (ahead > 0) this.#onBehind?.(ahead);
    return { applied: true, version: snapshot.version };
  }

  /** Adds a client resuming from (`since`, `epoch`); returns the function that removes it. */
  connect(client: StreamClient, since: number, epoch: string): () => void {
    const held = { since, epoch };
    this.#clients.set(client, held);
    const current = this.#snapshot;
    // Without a snapshot yet, the first one `apply` gets decides (the same rules).
    if (current) {
      if (since < current.version) {
        this.#send(client, this.#currentEvent() as string);
        held.since = current.version;
        held.epoch = this.epoch;
      } else if (epoch !== this.epoch) {
        this.#onBehind?.(since);
      }
    }
    return () => {
      this.#clients.delete(client);
    };
  }

  /** Ends every stream and stops the heartbeat (the control plane is shutting down). */
  close(): void {
    clearInterval(this.#heartbeat);
    for (const client of this.#clients.keys()) client.end();
    this.#clients.clear();
  }

  #currentEvent(): string | undefined {
    const snapshot = this.#snapshot;
    if (!snapshot) return undefined;
    this.#event ??= formatSseEvent(
      SNAPSHOT_EVENT,
      JSON.stringify(snapshot),
      `${this.epoch}:${snapshot.version}`,
    );
    return this.#event;
  }

  #sendHeartbeat(): void {
    const event = formatSseEvent(HEARTBEAT_EVENT, JSON.stringify({ version: this.version }));
    for (const client of this.#clients.keys()) this.#send(client, event);
  }

  #send(client: StreamClient, text: string): void {
    if (client.backlog() > this.#maxBacklogBytes) {
      // A client that does not read would make us hold every version for it: drop it instead.
      this.#clients.delete(client);
      client.end();
      return;
    }
    client.send(text);
  }
}
