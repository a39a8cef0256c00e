// The owner of the MCP proxy's upstream sessions: one keep-alive undici Pool per upstream server
// (`serverKey`, as the inspect forwarding client keeps them, so one tenant's slow server cannot
// take another's connections), and `open`, which sends the downstream client's own `initialize`
// (its capabilities, clientInfo, protocolVersion and id unchanged: the upstream session declares
// what the client can do) and returns the upstream's answer with the session it opened.
// `notifications/initialized` is the downstream client's to send; the proxy relays it through
// `send`. A stateless-era request gets `stateless`: one exchange on the same pool, no session; a
// session client of a stateless-era server gets `statelessSession`, which makes one per request.
import { MCP_ACCEPT } from '../../../shared/mcp/protocol.js';
import { DEFAULT_UPSTREAM_EGRESS, type UpstreamEgress } from '../../upstream/egress-connector.js';
import { upstreamFailure } from '../../upstream/errors.js';
import {
  createUpstreamPool,
  type ExchangeLimits,
  exchange,
  type UpstreamPool,
} from '../../upstream/exchange.js';
import {
  isErrorResponse,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../upstream/json-rpc.js';
import { Session, type UpstreamSession, type UpstreamSessionConfig } from './session.js';
import { StatelessUpstream, type StatelessUpstreamConfig } from './stateless.js';
import { type SessionClient, StatelessSession } from './stateless-session.js';

export interface UpstreamSessionsOptions {
  /** Most connections per upstream server (its pool). Default unlimited. */
  readonly maxConnectionsPerServer?: number;
  /** The egress check of every connection. Default: the built-in policy, node's resolver. */
  readonly egress?: UpstreamEgress;
}

export interface OpenedUpstreamSession {
  /** undefined when the upstream answered initialize with a JSON-RPC error (relayed as is). */
  readonly session: UpstreamSession | undefined;
  /** The upstream's answer to the client's initialize, unchanged. */
  readonly response: JsonRpcResponse;
  /** The HTTP status of that answer (a stateless-era-only upstream answers initialize 4xx). */
  readonly status: number;
}

export class UpstreamSessions {
  readonly #maxConnections: number | null;
  readonly #egress: UpstreamEgress;
  readonly #pools = new Map<string, UpstreamPool>();
  readonly #open = new Set<Session>();
  readonly #forget = (session: Session) => {
    this.#open.delete(session);
  };
  #closed = false;

  constructor(options: UpstreamSessionsOptions = {}) {
    this.#maxConnections = options.maxConnectionsPerServer ?? null;
    this.#egress = options.egress ?? DEFAULT_UPSTREAM_EGRESS;
  }

  /** Sessions opened and not closed yet. */
  get size(): number {
    return this.#open.size;
  }

  async open(
    config: UpstreamSessionConfig,
    initialize: JsonRpcRequest,
    signal?: AbortSignal,
  ): Promise<OpenedUpstreamSession> {
    const target = this.#poolFor(config);
    const limits: ExchangeLimits = {
      connectTimeoutMs: config.connectTimeoutMs,
      readTimeoutMs: config.readTimeoutMs,
      maxResponseBytes: config.maxMessageBytes,
    };
    const headers = ['content-type', 'application/json', 'accept', MCP_ACCEPT.POST];
    const token = config.authorization === undefined ? undefined : await config.authorization();
    if (token !== undefined) headers.push('authorization', `Bearer ${token}`);
    const outcome = await exchange({
      dispatcher: target.pool,
      path: target.path,
      headers,
      body: JSON.stringify(initialize),
      expectedId: initialize.id,
      skipStatus: 0,
      limits,
      signal,
    });
    const response = outcome.response!;
    if (isErrorResponse(response)) return { session: undefined, response, status: outcome.status };
    const result = response.result as { protocolVersion?: unknown } | null;
    const version =
      typeof result === 'object' && result !== null ? result.protocolVersion : undefined;
    if (typeof version !== 'string' || version === '') {
      throw upstreamFailure('initialize result has no protocolVersion', outcome.status);
    }
    const session = new Session(target, config, limits, outcome.sessionId, version, this.#forget);
    if (this.#closed) {
      await session.close();
      throw upstreamFailure('the upstream sessions are closed');
    }
    this.#open.add(session);
    return { session, response, status: outcome.status };
  }

  /** One stateless request's exchange with the upstream, on the server's pool (stateless.ts). */
  stateless(config: StatelessUpstreamConfig): StatelessUpstream {
    return new StatelessUpstream(this.#poolFor(config), config);
  }

  /** A session client's upstream session on a server of the stateless era (stateless-session.ts). */
  statelessSession(config: UpstreamSessionConfig, client: SessionClient): StatelessSession {
    return new StatelessSession((exchange) => this.stateless(exchange), config, client);
  }

  /** Closes every open session (DELETE, best effort), then the pools. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#open].map((session) => session.close()));
    const pools = [...this.#pools.values()].map((target) => target.pool);
    this.#pools.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  #poolFor(config: UpstreamSessionConfig): UpstreamPool {
    if (this.#closed) throw upstreamFailure('the upstream sessions are closed');
    const { serverKey, url } = config.target;
    const known = this.#pools.get(serverKey);
    if (known !== undefined && known.url === url) return known;
    // Exchanges time themselves (connect, read, idle per message): the pool adds no read timeout,
    // which would cut a standalone GET stream that is rightly silent.
    const target = createUpstreamPool(url, {
      serverKey,
      egress: this.#egress,
      connectTimeoutMs: config.connectTimeoutMs,
      readTimeoutMs: 0,
      maxConnections: this.#maxConnections,
    });
    // Registered again under another URL: the old pool finishes its requests, then closes.
    if (known !== undefined) known.pool.close().catch(() => {});
    this.#pools.set(serverKey, target);
    return target;
  }
}
