// Fans configuration snapshots out to the data planes connected to the configuration stream.
// It is one more sink of the snapshot publisher: each new version is serialized ONCE (lazily,
// when someone listens) and the same string is written to every client.
//
// Versions are monotonic per control-plane process; `epoch` names that process. A client resumes
// with the version and epoch it applied last: same epoch and not older → nothing to send; an
// older version → the current snapshot; a version from another epoch that is not older than the
// current one (the control plane restarted and counts from 1 again) → the publisher is asked to
// build above it (`onBehind`), and that build reaches every client.
//
// Kills travel as deltas (`sendKill`, event `kill`, id `kill:<seq>`), to every client at once and
// never behind a snapshot. A client connecting with a kill cursor is held while the kills it
// missed are read (`catchUp`): it then gets those kills first, then the live kills that arrived
// meanwhile, then the snapshot if it is behind, then a heartbeat that tells it it is caught up.
// Acknowledgements of kills come back over HTTP (the ack endpoint) and are handed to listeners
// (the HubKillSink) by data-plane id.
import { randomBytes } from 'node:crypto';
import {
  type AgentKillDelta,
  HEARTBEAT_EVENT,
  HEARTBEAT_INTERVAL_MS,
  KILL_EVENT,
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

/** The data plane behind a stream (its credential's row). */
export interface StreamRecipient {
  readonly id: string;
  readonly name: string;
}

export interface ConnectOptions {
  readonly dataPlane?: StreamRecipient;
  /**
   * Reads the kills the client missed (seq > its cursor). Called once the client is registered,
   * so a kill committed after the read began reaches it live; the client is held until the
   * missed kills are sent, and is ended (it reconnects) when the read fails.
   */
  readonly catchUp?: () => Promise<readonly AgentKillDelta[]>;
}

export type KillAcknowledgementListener = (
  dataPlaneId: string,
  seq: number,
  aborted: number,
) => void;

interface HeldClient {
  since: number;
  epoch: string;
  readonly dataPlane: StreamRecipient | undefined;
  /** Live kills that arrived while the client's catch-up was read; undefined once released. */
  pendingKills: AgentKillDelta[] | undefined;
}

export interface ConfigStreamHubOptions {
  /** Default: the protocol's 15 s (AGENT_GATEWAY_STREAM_HEARTBEAT_MS, runtime/config.ts). */
  readonly heartbeatMs?: number;
  /** A client that buffers more than this many bytes is disconnected (it resumes later). */
  readonly maxBacklogBytes?: number;
  /** Called when a client resumes from another epoch with a version not older than ours. */
  readonly onBehind?: (version: number) => void;
}

export class ConfigStreamHub implements SnapshotSink {
  readonly epoch = randomBytes(8).toString('hex');
  /** Each client with the version and epoch it holds (updated as versions are sent). */
  readonly #clients = new Map<StreamClient, HeldClient>();
  readonly #killListeners = new Set<KillAcknowledgementListener>();
  readonly #maxBacklogBytes: number;
  readonly #onBehind: ((version: number) => void) | undefined;
  readonly #heartbeat: NodeJS.Timeout;
  /** The heartbeat period in ms (the revocation sweep runs at it too). */
  readonly heartbeatMs: number;
  #snapshot: ConfigSnapshot | undefined;
  #event: string | undefined;

  constructor(options: ConfigStreamHubOptions = {}) {
    this.#maxBacklogBytes = options.maxBacklogBytes ?? 64 * 1024 * 1024;
    this.#onBehind = options.onBehind;
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_INTERVAL_MS;
    this.#heartbeat = setInterval(() => this.#sendHeartbeat(), this.heartbeatMs);
    this.#heartbeat.unref();
  }

  get version(): number {
    return this.#snapshot?.version ?? 0;
  }

  /** The kill sequence the current snapshot includes (0 without one). */
  get killsThrough(): number {
    return this.#snapshot?.killsThrough ?? 0;
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
      // A client still catching up gets the current snapshot when it is released.
      if (held.pendingKills) continue;
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
  connect(
    client: StreamClient,
    since: number,
    epoch: string,
    options: ConnectOptions = {},
  ): () => void {
    const held: HeldClient = {
      since,
      epoch,
      dataPlane: options.dataPlane,
      pendingKills: options.catchUp ? [] : undefined,
    };
    this.#clients.set(client, held);
    const disconnect = () => {
      this.#clients.delete(client);
    };
    if (!options.catchUp) {
      this.#sendSnapshotIfBehind(client, held);
      return disconnect;
    }
    options.catchUp().then(
      (missed) => this.#release(client, held, missed),
      () => {
        // Without its missed kills it must not be told it is caught up: it reconnects.
        if (this.#clients.get(client) !== held) return;
        this.#clients.delete(client);
        client.end();
      },
    );
    return disconnect;
  }

  /**
   * Writes a kill delta to every connected client (to one still catching up, after its missed
   * kills) and returns the data planes it went to, once each.
   */
  sendKill(delta: AgentKillDelta): StreamRecipient[] {
    const event = formatSseEvent(KILL_EVENT, JSON.stringify(delta), `kill:${delta.seq}`);
    const recipients = new Map<string, StreamRecipient>();
    for (const [client, held] of [...this.#clients]) {
      if (held.pendingKills) held.pendingKills.push(delta);
      else if (!this.#send(client, event)) continue;
      const plane = held.dataPlane ?? { id: `anonymous-${recipients.size}`, name: 'unnamed' };
      recipients.set(plane.id, plane);
    }
    return [...recipients.values()];
  }

  /** A data plane acknowledged kill `seq` (the ack endpoint calls this). */
  acknowledgeKill(dataPlaneId: string, seq: number, aborted: number): void {
    for (const listener of this.#killListeners) listener(dataPlaneId, seq, aborted);
  }

  onKillAcknowledged(listener: KillAcknowledgementListener): () => void {
    this.#killListeners.add(listener);
    return () => {
      this.#killListeners.delete(listener);
    };
  }

  #release(client: StreamClient, held: HeldClient, missed: readonly AgentKillDelta[]): void {
    if (this.#clients.get(client) !== held) return; // gone meanwhile
    const live = held.pendingKills ?? [];
    held.pendingKills = undefined;
    let sent = 0;
    for (const delta of [...missed, ...live]) {
      if (delta.seq <= sent) continue; // a live kill the read already found
      sent = delta.seq;
      if (
        !this.#send(client, formatSseEvent(KILL_EVENT, JSON.stringify(delta), `kill:${delta.seq}`))
      ) {
        return;
      }
    }
    this.#sendSnapshotIfBehind(client, held);
    if (this.#clients.has(client)) this.#send(client, this.#heartbeatEvent());
  }

  #sendSnapshotIfBehind(client: StreamClient, held: HeldClient): void {
    const current = this.#snapshot;
    // Without a snapshot yet, the first one `apply` gets decides (the same rules).
    if (!current) return;
    if (held.since < current.version) {
      this.#send(client, this.#currentEvent() as string);
      held.since = current.version;
      held.epoch = this.epoch;
    } else if (held.epoch !== this.epoch) {
      this.#onBehind?.(held.since);
    }
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

  #heartbeatEvent(): string {
    // The epoch lets a data plane tell "caught up" (its snapshot is of this epoch) from "a newer
    // version is being built above the one it holds" (another epoch: onBehind).
    return formatSseEvent(
      HEARTBEAT_EVENT,
      JSON.stringify({ version: this.version, epoch: this.epoch }),
    );
  }

  #sendHeartbeat(): void {
    const event = this.#heartbeatEvent();
    for (const [client, held] of [...this.#clients]) {
      if (!held.pendingKills) this.#send(client, event);
    }
  }

  /** False when the client was dropped instead. */
  #send(client: StreamClient, text: string): boolean {
    if (client.backlog() > this.#maxBacklogBytes) {
      // A client that does not read would make us hold every version for it: drop it instead.
      this.#clients.delete(client);
      client.end();
      return false;
    }
    client.send(text);
    return true;
  }
}
