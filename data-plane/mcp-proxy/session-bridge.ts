// Bridging eras, one way: a stateless client (2026-07-28) in front of an upstream that speaks only
// the session era. The gateway holds one upstream session per (tenant, agent, server), opened on
// first need with an `initialize` built from the first request's client info, the newest session
// revision and every client capability this era can carry back (elicitation in both modes,
// sampling, roots: capabilities are a session's in that era but a request's in this one), and
// closed after BRIDGE_IDLE_MS without a request in flight; every stateless request of that agent
// to that server goes over it:
// - ids are the gateway's own upstream (the session is shared by the agent's concurrent requests,
//   whose ids may collide) and the client's again in the answer; the era's `_meta` keys are
//   removed (a session-era server has its session for that), and a result gets the era's
//   `resultType: "complete"`;
// - a request the upstream sends during a call (elicitation, sampling, roots) becomes that call's
//   InputRequiredResult: its `inputRequests` are the upstream's requests, keyed by their ids, and
//   its `requestState` names the call, which stays in flight upstream (call-rounds.ts wraps that
//   state in the gateway's authenticated envelope). The client's retry carries its answers, which
//   go to the upstream as responses, and waits for what comes next: the result, or the next
//   question. A question the request's own client did not declare the capability for is
//   answered to the upstream at once with an error, as that client would; A call whose client does not come back within ROUND_STATE_TTL_MS is answered to the
//   upstream with an error. The call lives on this process: a retry that lands on another data
//   plane is told to call again;
// - `server/discover` is answered from the session's `initialize` result; `subscriptions/listen`
//   relays the session's GET stream (list changes and resource updates) to every listener.
import { randomUUID } from 'node:crypto';
import { isRecord } from '../../shared/json/is-record.js';
import {
  INPUT_REQUIRED_RESULT_TYPE,
  JSONRPC_ERROR_CODES,
  LATEST_SESSION_PROTOCOL_VERSION,
  MCP_META_KEYS,
  MCP_METHODS,
  STATELESS_PROTOCOL_VERSIONS,
} from '../../shared/mcp/protocol.js';
import { upstreamAborted, upstreamFailure } from '../upstream/errors.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../upstream/json-rpc.js';
import { ROUND_STATE_TTL_MS } from './call-rounds.js';
import { gatewayServerInfo } from './gateway-info.js';
import type {
  RequestOptions,
  UpstreamSession,
  UpstreamSessionConfig,
  UpstreamSessions,
} from './upstream/index.js';

/** A bridged upstream session with no request in flight is closed after this long. */
export const BRIDGE_IDLE_MS = 5 * 60_000;
/** The requestState a bridged call's InputRequiredResult carries (inside the gateway's
 *  envelope: the client never sees it bare). */
const PENDING_STATE_PREFIX = 'agent-gateway-bridge:';
const META_PREFIX = 'io.modelcontextprotocol/';
/** What a bridged session declares: what any client of this era may be asked through it. */
const BRIDGE_CAPABILITIES = Object.freeze({
  elicitation: { form: {}, url: {} },
  sampling: {},
  roots: {},
});

interface Opened {
  readonly session: UpstreamSession;
  /** The upstream's initialize result (server/discover is answered from it). */
  readonly initialized: Readonly<Record<string, unknown>>;
}

/** What a stateless request becomes on a bridge: the answer, or an upstream refusal. */
export interface Bridge {
  readonly key: string;
  readonly tenantId: string;
  readonly agentId: string;
  readonly opened: Promise<Opened>;
  inFlight: number;
  idle: NodeJS.Timeout | undefined;
  readonly listeners: Set<(message: JsonRpcMessage) => void>;
  listening: boolean;
  /** Calls waiting for their client's answers, by pending id. */
  readonly pending: Map<string, PendingCall>;
}

/** A call in flight upstream whose upstream asked something of the client. */
interface PendingCall {
  /** The questions not answered yet: input key → the upstream's request id. */
  readonly asked: Map<string, string | number>;
  /** The call's next events (its response, or its next questions). */
  readonly events: CallEvents;
  readonly expiry: NodeJS.Timeout;
}

type CallEvent =
  | { readonly kind: 'response'; readonly response: JsonRpcResponse }
  | { readonly kind: 'asked'; readonly requests: readonly JsonRpcRequest[] }
  | { readonly kind: 'failed'; readonly error: unknown };

/** The events of one upstream call, in order, for whoever waits on it. */
class CallEvents {
  readonly #queue: CallEvent[] = [];
  #waiter: ((event: CallEvent) => void) | undefined;

  push(event: CallEvent): void {
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter(event);
    } else {
      this.#queue.push(event);
    }
  }

  next(): Promise<CallEvent> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }
}

export class SessionBridges {
  readonly #upstreamSessions: UpstreamSessions;
  readonly #idleMs: number;
  readonly #bridges = new Map<string, Bridge>();

  constructor(upstreamSessions: UpstreamSessions, idleMs = BRIDGE_IDLE_MS) {
    this.#upstreamSessions = upstreamSessions;
    this.#idleMs = idleMs;
  }

  /** Bridges open now. */
  get size(): number {
    return this.#bridges.size;
  }

  /** The exchange of one stateless request over the (tenant, agent, server) bridge. */
  upstream(
    owner: { tenantId: string; agentId: string; serverKey: string },
    config: UpstreamSessionConfig,
    meta: { clientInfo: unknown; clientCapabilities: Readonly<Record<string, unknown>> },
  ): BridgedUpstream {
    const key = `${owner.tenantId}\n${owner.agentId}\n${owner.serverKey}`;
    let bridge = this.#bridges.get(key);
    if (bridge === undefined) {
      bridge = this.#open(key, owner, config, meta);
      this.#bridges.set(key, bridge);
    }
    return new BridgedUpstream(this, bridge, meta.clientCapabilities);
  }

  /** Closes the bridges of the agents `drop` names (killed, deleted). */
  closeWhere(drop: (tenantId: string, agentId: string) => boolean): void {
    for (const bridge of [...this.#bridges.values()]) {
      if (!drop(bridge.tenantId, bridge.agentId)) continue;
      this.#bridges.delete(bridge.key);
      this.#end(bridge).catch(() => {});
    }
  }

  /** Closes every bridge (the gateway stops). */
  async close(): Promise<void> {
    const bridges = [...this.#bridges.values()];
    this.#bridges.clear();
    await Promise.all(bridges.map((bridge) => this.#end(bridge)));
  }

  /** @internal A request starts on `bridge`. */
  enter(bridge: Bridge): void {
    bridge.inFlight += 1;
    if (bridge.idle !== undefined) clearTimeout(bridge.idle);
    bridge.idle = undefined;
  }

  /** @internal A request on `bridge` ended: with none left, the idle clock starts. */
  leave(bridge: Bridge): void {
    bridge.inFlight -= 1;
    if (bridge.inFlight > 0 || bridge.pending.size > 0 || bridge.listeners.size > 0) return;
    bridge.idle = setTimeout(() => {
      if (this.#bridges.get(bridge.key) === bridge) this.#bridges.delete(bridge.key);
      this.#end(bridge).catch(() => {});
    }, this.#idleMs);
    bridge.idle.unref();
  }

  /** @internal The session is unusable (gone, or never opened): the next request opens anew. */
  forget(bridge: Bridge): void {
    if (this.#bridges.get(bridge.key) === bridge) this.#bridges.delete(bridge.key);
  }

  #open(
    key: string,
    owner: { tenantId: string; agentId: string },
    config: UpstreamSessionConfig,
    meta: { clientInfo: unknown },
  ): Bridge {
    const bridge: Bridge = {
      key,
      tenantId: owner.tenantId,
      agentId: owner.agentId,
      inFlight: 0,
      idle: undefined,
      listeners: new Set(),
      listening: false,
      pending: new Map(),
      opened: undefined as never,
    };
    const opened = (async (): Promise<Opened> => {
      const initialize: JsonRpcRequest = {
        jsonrpc: '2.0',
        id: `agent-gateway-bridge-${randomUUID()}`,
        method: MCP_METHODS.INITIALIZE,
        params: {
          protocolVersion: LATEST_SESSION_PROTOCOL_VERSION,
          capabilities: BRIDGE_CAPABILITIES,
          clientInfo: isRecord(meta.clientInfo) ? meta.clientInfo : gatewayServerInfo(),
        },
      };
      const { session, response } = await this.#upstreamSessions.open(config, initialize);
      if (session === undefined) {
        const error = (response as { error?: { message?: string } }).error;
        throw upstreamFailure(`the upstream refused initialize: ${error?.message ?? 'an error'}`);
      }
      session.onGone = () => this.forget(bridge);
      await session.send({ jsonrpc: '2.0', method: MCP_METHODS.INITIALIZED });
      const result = (response as { result?: unknown }).result;
      return { session, initialized: isRecord(result) ? result : {} };
    })();
    // A bridge that could not open is not kept: the next request tries again.
    opened.catch(() => this.forget(bridge));
    Object.assign(bridge, { opened });
    return bridge;
  }

  async #end(bridge: Bridge): Promise<void> {
    if (bridge.idle !== undefined) clearTimeout(bridge.idle);
    for (const call of bridge.pending.values()) clearTimeout(call.expiry);
    bridge.pending.clear();
    try {
      const { session } = await bridge.opened;
      await session.close();
    } catch {
      // Never opened: nothing to close.
    }
  }
}

/** One stateless request's exchange over a bridge: what stateless.ts drives. */
export class BridgedUpstream implements UpstreamSession {
  readonly sessionId = undefined;
  readonly protocolVersion = STATELESS_PROTOCOL_VERSIONS[0];
  onGone: (() => void) | undefined = undefined;
  /** Always 200: the session era has no HTTP statuses for the client to read. */
  status = 200;
  /** Aborted by close(): this request stops (the bridge's session stays for the others). */
  readonly closing = new AbortController();
  readonly #bridges: SessionBridges;
  readonly #bridge: Bridge;
  /** What this request's client declared (the upstream's questions it cannot answer are not
   *  put to it). */
  readonly #capabilities: Readonly<Record<string, unknown>>;

  constructor(
    bridges: SessionBridges,
    bridge: Bridge,
    capabilities: Readonly<Record<string, unknown>>,
  ) {
    this.#bridges = bridges;
    this.#bridge = bridge;
    this.#capabilities = capabilities;
  }

  async request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    if (this.closing.signal.aborted) throw upstreamAborted();
    this.#bridges.enter(this.#bridge);
    try {
      const { session, initialized } = await this.#bridge.opened;
      if (message.method === MCP_METHODS.SERVER_DISCOVER) {
        return { jsonrpc: '2.0', id: message.id, result: discoverResult(initialized) };
      }
      const params = isRecord(message.params) ? message.params : {};
      const state = params.requestState;
      if (typeof state === 'string' && state.startsWith(PENDING_STATE_PREFIX)) {
        return await this.#resume(session, message, state.slice(PENDING_STATE_PREFIX.length));
      }
      return await this.#call(session, message, options);
    } finally {
      this.#bridges.leave(this.#bridge);
    }
  }

  /**
   * subscriptions/listen: the acknowledgement, then the session's GET stream (opened with the
   * bridge's first listener), until close(). Resolves with 200.
   */
  async stream(
    message: JsonRpcRequest,
    onMessage: (message: JsonRpcMessage) => void,
  ): Promise<number> {
    const { session } = await this.#bridge.opened;
    const params = isRecord(message.params) ? message.params : {};
    const wanted = isRecord(params.notifications) ? params.notifications : {};
    const subscriptionId = String(message.id);
    onMessage({
      jsonrpc: '2.0',
      method: MCP_METHODS.SUBSCRIPTIONS_ACKNOWLEDGED,
      params: {
        _meta: { [MCP_META_KEYS.SUBSCRIPTION_ID]: subscriptionId },
        notifications: wanted,
      },
    });
    const listener = (relayed: JsonRpcMessage) => {
      if (!('method' in relayed) || 'id' in relayed) return;
      const relayedParams = isRecord(relayed.params) ? relayed.params : {};
      const meta = isRecord(relayedParams._meta) ? relayedParams._meta : {};
      onMessage({
        ...relayed,
        params: {
          ...relayedParams,
          _meta: { ...meta, [MCP_META_KEYS.SUBSCRIPTION_ID]: subscriptionId },
        },
      } as JsonRpcMessage);
    };
    const bridge = this.#bridge;
    bridge.listeners.add(listener);
    if (!bridge.listening) {
      bridge.listening = true;
      session.listen(
        (relayed) => {
          for (const each of bridge.listeners) each(relayed);
        },
        () => {
          bridge.listening = false;
        },
      );
    }
    try {
      await new Promise<void>((resolve) => {
        if (this.closing.signal.aborted) resolve();
        this.closing.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      bridge.listeners.delete(listener);
      this.#bridges.enter(bridge);
      this.#bridges.leave(bridge);
    }
    return 200;
  }

  async send(): Promise<void> {
    throw upstreamFailure('a stateless client answers in its retry, not on its own');
  }

  listen(): void {
    // Listen streams are requests of their own (stream()).
  }

  async close(): Promise<void> {
    if (!this.closing.signal.aborted) this.closing.abort(CLOSED);
  }

  /** A first round: sent upstream with the gateway's id; answered, or asked a question. */
  async #call(
    session: UpstreamSession,
    message: JsonRpcRequest,
    options: RequestOptions,
  ): Promise<JsonRpcResponse> {
    const events = new CallEvents();
    let asked: JsonRpcRequest[] = [];
    let scheduled = false;
    session
      .request(
        {
          jsonrpc: '2.0',
          id: `agent-gateway-bridge-${randomUUID()}`,
          method: message.method,
          params: withoutEraMeta(message.params),
        },
        {
          signal: AbortSignal.any([
            this.closing.signal,
            ...(options.signal ? [options.signal] : []),
          ]),
          onMessage: (relayed) => {
            if ('method' in relayed && 'id' in relayed) {
              const question = relayed as JsonRpcRequest;
              const missing = missingCapability(question, this.#capabilities);
              if (missing !== undefined) {
                session
                  .send({
                    jsonrpc: '2.0',
                    id: question.id,
                    error: {
                      code: JSONRPC_ERROR_CODES.METHOD_NOT_FOUND,
                      message: `the client did not declare the ${missing} capability`,
                    },
                  } as never)
                  .catch(() => {});
                return;
              }
              // Questions that arrive together go to the client together.
              asked.push(question);
              if (scheduled) return;
              scheduled = true;
              setImmediate(() => {
                scheduled = false;
                events.push({ kind: 'asked', requests: asked });
                asked = [];
              });
              return;
            }
            options.onMessage?.(relayed);
          },
        },
      )
      .then(
        (response) => events.push({ kind: 'response', response }),
        (error: unknown) => events.push({ kind: 'failed', error }),
      );
    return this.#answer(session, message, events, undefined);
  }

  /** A later round: the client's answers go upstream, then the call's next event. */
  async #resume(
    session: UpstreamSession,
    message: JsonRpcRequest,
    pendingId: string,
  ): Promise<JsonRpcResponse> {
    const call = this.#bridge.pending.get(pendingId);
    if (call === undefined) {
      return {
        jsonrpc: '2.0',
        id: message.id,
        error: {
          code: JSONRPC_ERROR_CODES.INVALID_PARAMS,
          message:
            'the call this requestState continues is no longer in flight on this gateway process (it expired, the upstream session closed, or the retry reached another data plane): call the tool again without requestState',
        },
      };
    }
    this.#bridge.pending.delete(pendingId);
    clearTimeout(call.expiry);
    const params = isRecord(message.params) ? message.params : {};
    const responses = isRecord(params.inputResponses) ? params.inputResponses : {};
    for (const [key, upstreamId] of call.asked) {
      const answer = responses[key];
      const response: JsonRpcResponse = isRecord(answer)
        ? { jsonrpc: '2.0', id: upstreamId, result: answer }
        : {
            jsonrpc: '2.0',
            id: upstreamId,
            error: {
              code: JSONRPC_ERROR_CODES.INVALID_PARAMS,
              message: 'the client gave no answer',
            },
          };
      await session.send(response as never);
    }
    return this.#answer(session, message, call.events, pendingId);
  }

  /** The client's answer to this round: the call's response, or its next questions. */
  async #answer(
    session: UpstreamSession,
    message: JsonRpcRequest,
    events: CallEvents,
    pendingId: string | undefined,
  ): Promise<JsonRpcResponse> {
    const event = await events.next();
    if (event.kind === 'failed') throw event.error;
    if (event.kind === 'response') {
      return asClientResponse(event.response, message.id, message.method);
    }
    const id = pendingId ?? randomUUID();
    const asked = new Map<string, string | number>();
    const inputRequests: Record<string, unknown> = {};
    for (const request of event.requests) {
      const key = String(request.id);
      asked.set(key, request.id);
      inputRequests[key] = { method: request.method, params: request.params ?? {} };
    }
    const bridge = this.#bridge;
    const expiry = setTimeout(() => {
      bridge.pending.delete(id);
      for (const upstreamId of asked.values()) {
        session
          .send({
            jsonrpc: '2.0',
            id: upstreamId,
            error: {
              code: JSONRPC_ERROR_CODES.INTERNAL_ERROR,
              message: 'the client did not answer in time',
            },
          } as never)
          .catch(() => {});
      }
      this.#bridges.enter(bridge);
      this.#bridges.leave(bridge);
    }, ROUND_STATE_TTL_MS);
    expiry.unref();
    bridge.pending.set(id, { asked, events, expiry });
    return {
      jsonrpc: '2.0',
      id: message.id,
      result: {
        resultType: INPUT_REQUIRED_RESULT_TYPE,
        inputRequests,
        requestState: `${PENDING_STATE_PREFIX}${id}`,
      },
    };
  }
}

const CLOSED = new Error('the stateless request ended');

/** The capability `question` needs that `capabilities` lacks, or undefined. */
function missingCapability(
  question: JsonRpcRequest,
  capabilities: Readonly<Record<string, unknown>>,
): string | undefined {
  const params = isRecord(question.params) ? question.params : {};
  switch (question.method) {
    case MCP_METHODS.ELICITATION_CREATE: {
      const elicitation = capabilities.elicitation;
      if (!isRecord(elicitation)) return 'elicitation';
      if (params.mode === 'url') return isRecord(elicitation.url) ? undefined : 'elicitation.url';
      // An empty elicitation capability means form mode (2025-11-25).
      const modes = Object.keys(elicitation);
      return modes.length === 0 || isRecord(elicitation.form) ? undefined : 'elicitation.form';
    }
    case 'sampling/createMessage':
      return isRecord(capabilities.sampling) ? undefined : 'sampling';
    case 'roots/list':
      return isRecord(capabilities.roots) ? undefined : 'roots';
    default:
      return undefined;
  }
}

/** The request's params without the stateless era's `_meta` keys (the session has them). */
function withoutEraMeta(params: unknown): unknown {
  if (!isRecord(params) || !isRecord(params._meta)) return params;
  const meta = Object.fromEntries(
    Object.entries(params._meta).filter(([key]) => !key.startsWith(META_PREFIX)),
  );
  const { _meta: _era, ...rest } = params;
  return Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta };
}

/** The list methods whose results this era requires to say how they may be cached. */
const LIST_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
]);

/**
 * The upstream's response as the client's: its id, a result marked complete, and a list that
 * says how it may be cached: not at all (`ttlMs` 0), and never shared (`private`: the session it
 * came from is the agent's), since the session era says nothing about it.
 */
function asClientResponse(
  response: JsonRpcResponse,
  id: JsonRpcRequest['id'],
  method: string,
): JsonRpcResponse {
  if ('result' in response) {
    const result = isRecord(response.result) ? response.result : {};
    const caching = LIST_METHODS.has(method) ? { ttlMs: 0, cacheScope: 'private' } : {};
    return { jsonrpc: '2.0', id, result: { resultType: 'complete', ...caching, ...result } };
  }
  return { ...response, id };
}

/** server/discover from the session's initialize result. */
function discoverResult(initialized: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    resultType: 'complete',
    supportedVersions: [...STATELESS_PROTOCOL_VERSIONS],
    capabilities: isRecord(initialized.capabilities) ? initialized.capabilities : {},
    ...(typeof initialized.instructions === 'string'
      ? { instructions: initialized.instructions }
      : {}),
    ttlMs: 0,
    cacheScope: 'public',
    _meta: isRecord(initialized.serverInfo)
      ? { [MCP_META_KEYS.SERVER_INFO]: initialized.serverInfo }
      : {},
  };
}
