// The production-mode forwarding client: sends an allowed MCP call to the tenant's registered
// upstream over MCP Streamable HTTP and returns the upstream's JSON-RPC response as it came.
//
// - One undici Pool (keep-alive) per upstream target (`serverKey`), so one tenant's slow server
//   cannot take the connections of another tenant's server on the same host.
// - One MCP session per `sessionKey` (tenant, agent, server): `initialize` +
//   `notifications/initialized` on first use, shared by concurrent first calls; the negotiated
//   protocol version and the `Mcp-Session-Id` (absent for stateless servers) are kept in a
//   bounded LRU. A 404 to a request carrying a session id means the session is gone: the session
//   is opened again and the call retried once.
// - A server of the stateless era only (2026-07-28: it refuses initialize with 400 and one of
//   that era's errors) gets each request alone instead, with that era's `_meta` (the gateway's
//   clientInfo, no capabilities) and headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name): so a
//   registration learns its tools and inspect forwards to it. What it was found to be is kept for
//   the key as a session is.
// - The request id is the agent's: the message is sent as given, never rewritten.
// - Every connection passes the egress policy on the address it goes to (egress-connector.ts).
// - Server-initiated requests and notifications in an SSE answer are not relayed in this version.
import { Pool } from 'undici';
import { isRecord } from '../../shared/json/is-record.js';
import {
  INSPECT_OFFERED_PROTOCOL_VERSION,
  MCP_ACCEPT,
  MCP_HEADERS,
  MCP_METHODS,
  STATELESS_ERA_ERROR_CODES,
  STATELESS_PROTOCOL_VERSIONS,
} from '../../shared/mcp/protocol.js';
import { statelessMeta, statelessRequestHeaders } from '../../shared/mcp/stateless-request.js';
import {
  createEgressConnector,
  DEFAULT_UPSTREAM_EGRESS,
  type UpstreamEgress,
} from './egress-connector.js';
import { UpstreamError, upstreamAborted, upstreamFailure } from './errors.js';
import { type ExchangeLimits, type ExchangeOutcome, exchange } from './exchange.js';
import {
  isErrorResponse,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from './json-rpc.js';

export interface UpstreamTarget {
  /** Stable id of the registered server (tenant + server id): the unit of connection pooling. */
  readonly serverKey: string;
  /** The server's Streamable HTTP endpoint (http or https). */
  readonly url: string;
}

export interface ForwardRequest {
  readonly target: UpstreamTarget;
  /** (tenant, agent, server): the MCP session is kept per agent and server. */
  readonly sessionKey: string;
  readonly message: JsonRpcRequest;
  /** Sent as `Authorization: Bearer <token>`; minted by the gateway, never the agent's. */
  readonly accessToken?: string;
  /** Aborting rejects the forward with MCP_UPSTREAM_ABORTED (the kill switch). */
  readonly signal?: AbortSignal;
}

export interface ForwardResult {
  /** The upstream's JSON-RPC response (a result or an error), unchanged. */
  readonly response: JsonRpcResponse;
  readonly httpStatus: number;
  /** The upstream session used; undefined for a stateless upstream. */
  readonly sessionId?: string;
  /** Wall time of the forward, including opening the session when one was opened. */
  readonly durationMs: number;
}

export interface ListToolsOptions {
  readonly accessToken?: string;
  readonly signal?: AbortSignal;
}

export interface UpstreamTool {
  readonly name: string;
  /** The tool's MCP annotations (`destructiveHint`, `readOnlyHint`, …) as the upstream sent them. */
  readonly annotations?: Record<string, unknown>;
}

/** One tool with its whole definition as the upstream sent it (what a definition digest covers). */
export interface UpstreamToolDefinition {
  readonly name: string;
  readonly definition: Readonly<Record<string, unknown>>;
}

export interface UpstreamClientOptions {
  /** Pool queue + TCP/TLS connect, in ms. Default 2000. */
  connectTimeoutMs?: number;
  /** From the request being written until the response is complete (headers and body), in ms.
   *  Default 30000. */
  readTimeoutMs?: number;
  /** Largest response body accepted, in bytes. Default 4 MiB. */
  maxResponseBytes?: number;
  /** Sent in `initialize`. Default { name: 'agent-gateway', version: '0.1.0' }. */
  clientInfo?: { name: string; version: string };
  /** Protocol version offered in `initialize`. Default INSPECT_OFFERED_PROTOCOL_VERSION
   *  (shared/mcp/protocol.ts says why it is not the newest). */
  protocolVersion?: string;
  /** Most sessions kept (least recently used are forgotten first). Default 10000. */
  maxSessions?: number;
  /** Most connections per upstream target (its pool). Default unlimited. */
  maxConnectionsPerOrigin?: number;
  /** The egress check of every connection (egress-connector.ts). Default: the built-in policy
   *  with node's resolver. */
  egress?: UpstreamEgress;
}

export interface UpstreamClient {
  /** Forwards one JSON-RPC request; throws UpstreamError. */
  forward(request: ForwardRequest): Promise<ForwardResult>;
  /** All tools of the upstream (following `nextCursor`, at most MAX_TOOL_PAGES pages). */
  listTools(target: UpstreamTarget, options?: ListToolsOptions): Promise<UpstreamTool[]>;
  /** The same list, each tool with its whole definition (description, schemas, annotations). */
  listToolDefinitions(
    target: UpstreamTarget,
    options?: ListToolsOptions,
  ): Promise<UpstreamToolDefinition[]>;
  /** Forgets the sessions whose key matches (e.g. every session of a killed agent). */
  dropSessions(predicate: (sessionKey: string) => boolean): void;
  /** Forgets all sessions and closes the pools once their in-flight requests are done. */
  close(): Promise<void>;
}

export const UPSTREAM_DEFAULTS = {
  connectTimeoutMs: 2_000,
  readTimeoutMs: 30_000,
  maxResponseBytes: 4 * 1024 * 1024,
  clientInfo: { name: 'agent-gateway', version: '0.1.0' },
  protocolVersion: INSPECT_OFFERED_PROTOCOL_VERSION,
  maxSessions: 10_000,
} as const;

export const MAX_TOOL_PAGES = 100;
export const MAX_TOOLS = 10_000;

/** The session key prefix of `listTools` (a NUL cannot occur in the gateway's own keys). */
const LIST_TOOLS_KEY_PREFIX = '\u0000tools/list\u0000';

/** `notifications/initialized`, serialized once. */
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: MCP_METHODS.INITIALIZED });

interface Target {
  readonly url: string;
  readonly pool: Pool;
  readonly path: string;
}

/** One MCP session with one upstream, for one session key. One shape from construction on. */
class Session {
  readonly url: string;
  id: string | undefined = undefined;
  protocolVersion = '';
  ready = false;
  /** The upstream speaks only the stateless era (it refused initialize as such a server does):
   *  every request goes alone, with that era's `_meta` and headers, and no session id. */
  stateless = false;
  opening: Promise<Session> | null = null;

  constructor(url: string) {
    this.url = url;
  }
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive integer`);
  }
  return value;
}

export function createUpstreamClient(options: UpstreamClientOptions = {}): UpstreamClient {
  return new ForwardingClient(options);
}

class ForwardingClient implements UpstreamClient {
  readonly #limits: ExchangeLimits;
  readonly #clientInfo: { name: string; version: string };
  readonly #protocolVersion: string;
  readonly #maxSessions: number;
  readonly #maxConnections: number | null;
  readonly #egress: UpstreamEgress;
  readonly #targets = new Map<string, Target>();
  readonly #sessions = new Map<string, Session>();
  #nextId = 0;
  #closed = false;

  constructor(options: UpstreamClientOptions) {
    this.#limits = {
      connectTimeoutMs: positive(
        'connectTimeoutMs',
        options.connectTimeoutMs,
        UPSTREAM_DEFAULTS.connectTimeoutMs,
      ),
      readTimeoutMs: positive(
        'readTimeoutMs',
        options.readTimeoutMs,
        UPSTREAM_DEFAULTS.readTimeoutMs,
      ),
      maxResponseBytes: positive(
        'maxResponseBytes',
        options.maxResponseBytes,
        UPSTREAM_DEFAULTS.maxResponseBytes,
      ),
    };
    this.#clientInfo = { ...(options.clientInfo ?? UPSTREAM_DEFAULTS.clientInfo) };
    this.#protocolVersion = options.protocolVersion ?? UPSTREAM_DEFAULTS.protocolVersion;
    this.#maxSessions = positive('maxSessions', options.maxSessions, UPSTREAM_DEFAULTS.maxSessions);
    this.#maxConnections =
      options.maxConnectionsPerOrigin === undefined
        ? null
        : positive('maxConnectionsPerOrigin', options.maxConnectionsPerOrigin, 1);
    this.#egress = options.egress ?? DEFAULT_UPSTREAM_EGRESS;
  }

  async forward(request: ForwardRequest): Promise<ForwardResult> {
    const started = performance.now();
    const id = request.message.id;
    if (typeof id !== 'string' && typeof id !== 'number') {
      throw new TypeError('forward needs a JSON-RPC request with a string or number id');
    }
    const { outcome, session } = await this.#call(
      request.target,
      request.sessionKey,
      request.message,
      request.accessToken,
      request.signal,
    );
    return {
      response: outcome.response!,
      httpStatus: outcome.status,
      sessionId: session.id,
      durationMs: performance.now() - started,
    };
  }

  async listTools(target: UpstreamTarget, options: ListToolsOptions = {}): Promise<UpstreamTool[]> {
    return (await this.listToolDefinitions(target, options)).map(({ name, definition }) => {
      const annotations = definition.annotations;
      return isRecord(annotations) ? { name, annotations } : { name };
    });
  }

  async listToolDefinitions(
    target: UpstreamTarget,
    options: ListToolsOptions = {},
  ): Promise<UpstreamToolDefinition[]> {
    const sessionKey = LIST_TOOLS_KEY_PREFIX + target.serverKey;
    const tools: UpstreamToolDefinition[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const message: JsonRpcRequest = {
        jsonrpc: '2.0',
        id: `agw-tools-${++this.#nextId}`,
        method: MCP_METHODS.TOOLS_LIST,
        params: cursor === undefined ? {} : { cursor },
      };
      const { outcome } = await this.#call(
        target,
        sessionKey,
        message,
        options.accessToken,
        options.signal,
      );
      const { response, status } = outcome;
      const result = this.#resultOf(response!, MCP_METHODS.TOOLS_LIST, status);
      const list = result.tools;
      if (!Array.isArray(list))
        throw upstreamFailure('tools/list result has no tools array', status);
      for (const tool of list as unknown[]) {
        const name = (tool as { name?: unknown } | null)?.name;
        if (typeof name !== 'string') throw upstreamFailure('tools/list has a tool without a name');
        tools.push({ name, definition: tool as Record<string, unknown> });
        if (tools.length > MAX_TOOLS) throw upstreamFailure(`more than ${MAX_TOOLS} tools`);
      }
      const next = result.nextCursor;
      if (typeof next !== 'string' || next === '') return tools;
      if (seenCursors.has(next)) throw upstreamFailure('tools/list pagination repeats a cursor');
      seenCursors.add(next);
      cursor = next;
    }
    throw upstreamFailure(`tools/list has more than ${MAX_TOOL_PAGES} pages`);
  }

  dropSessions(predicate: (sessionKey: string) => boolean): void {
    for (const key of this.#sessions.keys()) {
      if (predicate(key)) this.#sessions.delete(key);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#sessions.clear();
    const pools = [...this.#targets.values()].map((target) => target.pool);
    this.#targets.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  /** Sends one request within the key's session; re-opens an expired session and retries once. */
  async #call(
    target: UpstreamTarget,
    sessionKey: string,
    message: JsonRpcRequest,
    accessToken: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ outcome: ExchangeOutcome; session: Session }> {
    if (signal?.aborted) throw upstreamAborted();
    const pool = this.#targetFor(target);
    let session = this.#sessions.get(sessionKey);
    if (session !== undefined) {
      // Most recently used last: Map iteration order is the LRU order.
      this.#sessions.delete(sessionKey);
      this.#sessions.set(sessionKey, session);
    }
    if (session === undefined || !session.ready || session.url !== target.url) {
      session = await this.#openSession(pool, sessionKey, accessToken, signal);
    }
    if (session.stateless) {
      const outcome = await this.#send(
        pool,
        session,
        message.id,
        JSON.stringify(this.#statelessMessage(message)),
        accessToken,
        signal,
        false,
        statelessRequestHeaders(message.method, message.params),
      );
      return { outcome, session };
    }
    const body = JSON.stringify(message);
    let outcome = await this.#send(pool, session, message.id, body, accessToken, signal, true);
    if (outcome.response === undefined) {
      // 404 to a request with a session id: the upstream forgot the session.
      if (this.#sessions.get(sessionKey) === session) this.#sessions.delete(sessionKey);
      session = await this.#openSession(pool, sessionKey, accessToken, signal);
      outcome = await this.#send(pool, session, message.id, body, accessToken, signal, false);
    }
    return { outcome, session };
  }

  #send(
    target: Target,
    session: Session,
    id: JsonRpcId | undefined,
    body: string,
    accessToken: string | undefined,
    signal: AbortSignal | undefined,
    retryOnExpiry: boolean,
    extraHeaders: readonly string[] = [],
  ): Promise<ExchangeOutcome> {
    const headers = [
      'content-type',
      'application/json',
      'accept',
      MCP_ACCEPT.POST,
      ...extraHeaders,
    ];
    if (session.id !== undefined) headers.push(MCP_HEADERS.SESSION_ID, session.id);
    if (session.protocolVersion !== '')
      headers.push(MCP_HEADERS.PROTOCOL_VERSION, session.protocolVersion);
    if (accessToken !== undefined) headers.push('authorization', `Bearer ${accessToken}`);
    return exchange({
      dispatcher: target.pool,
      path: target.path,
      headers,
      body,
      expectedId: id,
      skipStatus: retryOnExpiry && session.id !== undefined ? 404 : 0,
      limits: this.#limits,
      signal,
    });
  }

  /** The key's ready session, opening it if needed; concurrent callers share one opening. */
  async #openSession(
    target: Target,
    sessionKey: string,
    accessToken: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Session> {
    let session = this.#sessions.get(sessionKey);
    if (session !== undefined && session.url !== target.url) {
      this.#sessions.delete(sessionKey);
      session = undefined;
    }
    if (session === undefined) {
      session = new Session(target.url);
      this.#remember(sessionKey, session);
    }
    if (session.ready) return session;
    if (session.opening === null) {
      // Not tied to one caller's signal: other callers may be waiting on the same opening.
      session.opening = this.#initialize(target, sessionKey, session, accessToken);
    }
    return signal === undefined ? session.opening : abortable(session.opening, signal);
  }

  async #initialize(
    target: Target,
    sessionKey: string,
    session: Session,
    accessToken: string | undefined,
  ): Promise<Session> {
    try {
      const id = `agw-init-${++this.#nextId}`;
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: MCP_METHODS.INITIALIZE,
        params: {
          protocolVersion: this.#protocolVersion,
          capabilities: {},
          clientInfo: this.#clientInfo,
        },
      });
      const init = await this.#send(target, session, id, body, accessToken, undefined, false);
      if (refusesLikeStatelessEra(init.status, init.response)) {
        // A server of the stateless era only: no session to open; requests go alone.
        session.stateless = true;
        session.protocolVersion = STATELESS_PROTOCOL_VERSIONS[0];
        session.ready = true;
        return session;
      }
      const result = this.#resultOf(init.response!, MCP_METHODS.INITIALIZE, init.status);
      const version = result.protocolVersion;
      if (typeof version !== 'string' || version === '') {
        throw upstreamFailure('initialize result has no protocolVersion', init.status);
      }
      session.id = init.sessionId;
      session.protocolVersion = version;
      await this.#send(target, session, undefined, INITIALIZED, accessToken, undefined, false);
      session.ready = true;
      return session;
    } catch (error) {
      if (this.#sessions.get(sessionKey) === session) this.#sessions.delete(sessionKey);
      throw error instanceof UpstreamError
        ? error
        : upstreamFailure('session initialization failed');
    } finally {
      session.opening = null;
    }
  }

  /** `message` as a stateless-era request: the era's `_meta`, as the gateway's own client. */
  #statelessMessage(message: JsonRpcRequest): JsonRpcRequest {
    const params = isRecord(message.params) ? message.params : {};
    return {
      ...message,
      params: {
        ...params,
        _meta: statelessMeta(params._meta, { clientInfo: this.#clientInfo, capabilities: {} }),
      },
    };
  }

  #resultOf(response: JsonRpcResponse, method: string, status: number): Record<string, unknown> {
    if (isErrorResponse(response)) {
      throw upstreamFailure(`${method} failed with JSON-RPC error ${response.error.code}`, status);
    }
    const result = response.result;
    if (typeof result !== 'object' || result === null || Array.isArray(result)) {
      throw upstreamFailure(`${method} result is not an object`, status);
    }
    return result as Record<string, unknown>;
  }

  #remember(sessionKey: string, session: Session): void {
    this.#sessions.set(sessionKey, session);
    if (this.#sessions.size > this.#maxSessions) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
  }

  #targetFor(target: UpstreamTarget): Target {
    if (this.#closed) throw upstreamFailure('the upstream client is closed');
    const known = this.#targets.get(target.serverKey);
    if (known !== undefined && known.url === target.url) return known;
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      throw upstreamFailure('the upstream URL is invalid');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw upstreamFailure('the upstream URL is not http or https');
    }
    if (known !== undefined) {
      // The server was registered again under another URL: retire the old pool gracefully.
      known.pool.close().catch(() => {});
    }
    const pool = new Pool(url.origin, {
      connections: this.#maxConnections,
      pipelining: 1,
      connect: createEgressConnector(this.#egress, target.serverKey, this.#limits.connectTimeoutMs),
      headersTimeout: this.#limits.readTimeoutMs,
      bodyTimeout: this.#limits.readTimeoutMs,
    });
    const entry: Target = { url: target.url, pool, path: `${url.pathname}${url.search}` };
    this.#targets.set(target.serverKey, entry);
    return entry;
  }
}

/** `promise`, but rejected with MCP_UPSTREAM_ABORTED as soon as `signal` fires. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(upstreamAborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(upstreamAborted());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** True when an upstream refused initialize the way only a server of the stateless era does. */
function refusesLikeStatelessEra(status: number, response: JsonRpcResponse | undefined): boolean {
  if (status < 400 || status >= 500 || response === undefined || !isErrorResponse(response)) {
    return false;
  }
  return STATELESS_ERA_ERROR_CODES.has(response.error.code);
}
