// The proxy's downstream sessions: one per `Mcp-Session-Id` the proxy handed out, each bound to
// the agent, tenant and server that opened it and owning exactly one upstream session. Never
// shared: sampling, elicitation, roots, subscriptions and the log level are per-client state,
// and a shared upstream session would send one client's server-initiated requests to another.
//
// Bounded: at most `maxSessions` live (the least recently used is closed first), and a session
// idle for `idleMs` is closed by the sweep. A killed agent's sessions are closed at once
// (`closeAgent`, called by the kill applier) and their ids remembered (as many as sessions may be
// open, for the idle period), so a client still using one is told AGENT_REVOKED rather than that
// its session is unknown: a 404 invites it to start a new session, which would be refused anyway. In-flight counts per session and per agent are the
// concurrency limits of issue 14 item 8.
import { randomUUID } from 'node:crypto';
import type { AgentId, TenantId } from '../../shared/ids.js';
import { ReplayLogs } from './transport/replay.js';
import type { ServerStream } from './transport/response-stream.js';
import type { UpstreamSession } from './upstream/index.js';

export interface ProxySession {
  readonly id: string;
  readonly tenantId: TenantId;
  readonly agentId: AgentId;
  readonly serverId: string;
  readonly upstream: UpstreamSession;
  /** The protocol revision initialize negotiated. */
  readonly protocolVersion: string;
  /** The client's `initialize` capabilities (what server-initiated requests it can answer). */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /** Calls in flight on this session. */
  inFlight: number;
  lastUsedMs: number;
  /** The session's GET stream, when the client has one open. */
  serverStream: ServerStream | undefined;
  /** Aborted when the session closes: waits and relays of this session stop. */
  readonly closed: AbortController;
  /** The session's event streams, for clients that resume one with Last-Event-ID. */
  readonly replay: ReplayLogs;
}

export interface SessionLimits {
  readonly maxSessions: number;
  readonly idleMs: number;
  readonly perSessionInFlight: number;
  readonly perAgentInFlight: number;
}

export const SESSION_DEFAULTS: SessionLimits = {
  maxSessions: 10_000,
  idleMs: 30 * 60_000,
  perSessionInFlight: 32,
  perAgentInFlight: 128,
};

export type Admission = 'ok' | 'session' | 'agent';

/** What a stateless registration is: a request being served, or a listen stream. */
export type TrackedKind = 'request' | 'listen';

interface TrackedEntry {
  readonly tenantId: TenantId;
  readonly agentId: AgentId;
  readonly kind: TrackedKind;
  readonly end: () => void;
}

/** Whose session a killed agent's closed session id was. */
export interface RevokedSession {
  readonly tenantId: TenantId;
  readonly agentId: AgentId;
  readonly serverId: string;
  readonly closedMs: number;
}

export class ProxySessions {
  readonly limits: SessionLimits;
  /** Insertion order is recency order (a use moves a session to the end). */
  readonly #byId = new Map<string, ProxySession>();
  readonly #inFlightByAgent = new Map<AgentId, number>();
  /** Sessions closed by a kill, oldest first. */
  readonly #revoked = new Map<string, RevokedSession>();
  #sweep: NodeJS.Timeout | undefined;

  readonly #onCount: ((open: number) => void) | undefined;

  /** `onCount` hears the number of open sessions after each change (a gauge). */
  constructor(limits: Partial<SessionLimits> = {}, onCount?: (open: number) => void) {
    this.limits = { ...SESSION_DEFAULTS, ...limits };
    this.#onCount = onCount;
    this.#sweep = setInterval(() => this.#closeIdle(), Math.min(this.limits.idleMs, 60_000));
    this.#sweep.unref();
  }

  get size(): number {
    return this.#byId.size;
  }

  create(
    fields: Omit<
      ProxySession,
      'id' | 'inFlight' | 'lastUsedMs' | 'serverStream' | 'closed' | 'replay'
    >,
  ): ProxySession {
    const session: ProxySession = {
      ...fields,
      id: randomUUID(),
      inFlight: 0,
      lastUsedMs: Date.now(),
      serverStream: undefined,
      closed: new AbortController(),
      replay: new ReplayLogs(),
    };
    this.#byId.set(session.id, session);
    if (this.#byId.size > this.limits.maxSessions) {
      const oldest = this.#byId.values().next().value;
      if (oldest) this.close(oldest);
    }
    this.#onCount?.(this.#byId.size);
    return session;
  }

  get(id: string): ProxySession | undefined {
    const session = this.#byId.get(id);
    if (session) {
      const now = Date.now();
      // Moved to the recent end at most once a second: a busy session is not re-inserted on
      // every message (the order only matters for evicting the least recently used).
      if (now - session.lastUsedMs > 1_000) {
        this.#byId.delete(id);
        this.#byId.set(id, session);
      }
      session.lastUsedMs = now;
    }
    return session;
  }

  /** The killed agent a session id belonged to, while it is remembered. */
  revokedSession(id: string): RevokedSession | undefined {
    return this.#revoked.get(id);
  }

  /** Counts a call in, unless the session or the agent is at its limit. */
  admit(session: ProxySession): Admission {
    if (session.inFlight >= this.limits.perSessionInFlight) return 'session';
    if (!this.admitAgent(session.agentId)) return 'agent';
    session.inFlight += 1;
    return 'ok';
  }

  release(session: ProxySession): void {
    session.inFlight -= 1;
    this.releaseAgent(session.agentId);
  }

  /** Counts a call of the agent in (a stateless request has no session), unless at its limit. */
  admitAgent(agentId: AgentId): boolean {
    const agentCount = this.#inFlightByAgent.get(agentId) ?? 0;
    if (agentCount >= this.limits.perAgentInFlight) return false;
    this.#inFlightByAgent.set(agentId, agentCount + 1);
    return true;
  }

  releaseAgent(agentId: AgentId): void {
    const agentCount = (this.#inFlightByAgent.get(agentId) ?? 1) - 1;
    if (agentCount <= 0) this.#inFlightByAgent.delete(agentId);
    else this.#inFlightByAgent.set(agentId, agentCount);
  }

  /**
   * Registers a stateless request or listen stream of the agent (no session holds it), so a kill
   * ends it like a session, a stopping server ends a listen stream like a GET stream, and the
   * final close ends what is left. `end` runs once at most; the returned function unregisters it.
   */
  track(tenantId: TenantId, agentId: AgentId, kind: TrackedKind, end: () => void): () => void {
    const entry = { tenantId, agentId, kind, end };
    this.#stateless.add(entry);
    return () => {
      this.#stateless.delete(entry);
    };
  }

  /** The agent's stateless listen streams open in this process. */
  listenCount(tenantId: TenantId, agentId: AgentId): number {
    let count = 0;
    for (const entry of this.#stateless) {
      if (entry.kind === 'listen' && entry.tenantId === tenantId && entry.agentId === agentId) {
        count += 1;
      }
    }
    return count;
  }

  readonly #stateless = new Set<TrackedEntry>();

  #endTracked(match: (entry: TrackedEntry) => boolean): number {
    let ended = 0;
    for (const entry of [...this.#stateless]) {
      if (!match(entry)) continue;
      this.#stateless.delete(entry);
      entry.end();
      ended += 1;
    }
    return ended;
  }

  /** Ends a session: its waits stop, its GET stream ends, its upstream session is deleted. */
  close(session: ProxySession): void {
    if (!this.#byId.delete(session.id)) return;
    this.#onCount?.(this.#byId.size);
    session.closed.abort();
    session.serverStream?.end();
    session.upstream.close().catch(() => {});
  }

  /** Calls `listener` whenever the kill switch closes an agent's sessions (closeAgent): what
   *  else the proxy holds for the agent (its bridged upstream sessions) ends with them. */
  onAgentClosed(listener: (tenantId: string, agentId: string) => void): void {
    this.#agentClosedListeners.push(listener);
  }

  readonly #agentClosedListeners: ((tenantId: string, agentId: string) => void)[] = [];

  /** Closes every session of the agent (the kill switch) and ends its stateless requests and
   *  listen streams; returns how many sessions. */
  closeAgent(tenantId: string, agentId: string): number {
    this.#endTracked((entry) => entry.tenantId === tenantId && entry.agentId === agentId);
    for (const listener of this.#agentClosedListeners) listener(tenantId, agentId);
    let closed = 0;
    for (const session of [...this.#byId.values()]) {
      if (session.tenantId === tenantId && session.agentId === agentId) {
        this.close(session);
        this.#revoked.set(session.id, {
          tenantId: session.tenantId,
          agentId: session.agentId,
          serverId: session.serverId,
          closedMs: Date.now(),
        });
        if (this.#revoked.size > this.limits.maxSessions) {
          const oldest = this.#revoked.keys().next().value;
          if (oldest !== undefined) this.#revoked.delete(oldest);
        }
        closed += 1;
      }
    }
    return closed;
  }

  /**
   * Ends every session's GET stream, for a stopping server: an open stream is a request in
   * flight, which the server's close would wait for. The sessions stay open until `closeAll`, so
   * calls still running finish over their upstream sessions.
   */
  endServerStreams(): void {
    for (const session of this.#byId.values()) session.serverStream?.end();
    this.#endTracked((entry) => entry.kind === 'listen');
  }

  closeAll(): void {
    this.#endTracked(() => true);
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    for (const session of [...this.#byId.values()]) this.close(session);
  }

  #closeIdle(): void {
    const before = Date.now() - this.limits.idleMs;
    for (const session of [...this.#byId.values()]) {
      if (session.lastUsedMs < before && session.inFlight === 0) this.close(session);
    }
    for (const [id, revoked] of this.#revoked) {
      if (revoked.closedMs >= before) break;
      this.#revoked.delete(id);
    }
  }
}
