// Bridging eras, the other way: a session client (2025-11-25 and older) in front of an upstream
// that speaks only the stateless era (2026-07-28). The proxy session keeps everything of a session
// on the gateway's side (the client's capabilities and info from its initialize, its negotiated
// revision), and this upstream-session object turns each of its requests into a stateless request
// of its own (stateless.ts, one exchange each, on the server's pool):
// - the era's `_meta` (protocolVersion 2026-07-28, the session's clientInfo and capabilities) and
//   headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name in the Base64 sentinel when it must be)
//   are added; what the session era does not have is taken out of results (`resultType`, `ttlMs`,
//   `cacheScope`);
// - an upstream's InputRequiredResult becomes server-to-client requests on the call's stream, one
//   per input request, with ids of the gateway's (GATEWAY_INPUT_ID_PREFIX); the client's answers
//   come back through `send`, and the call is retried upstream with them as `inputResponses` and
//   the upstream's `requestState` verbatim, at most MAX_ROUNDS times;
// - `listen` opens `subscriptions/listen` for the list changes and resource updates the session's
//   GET stream carries; client notifications have no destination in this era: they are accepted,
//   and `notifications/cancelled` aborts the exchange of the request it names (in this era,
//   closing a request's stream is its cancellation);
// - what has no request of its own in this era is kept here: `ping` is answered (the upstream has
//   no session to keep alive) and `logging/setLevel` sets the level every later request carries
//   in its `_meta`.
import { randomUUID } from 'node:crypto';
import { isRecord } from '../../../shared/json/is-record.js';
import {
  INPUT_REQUIRED_RESULT_TYPE,
  MCP_HEADERS,
  MCP_META_KEYS,
  MCP_METHODS,
  STATELESS_PROTOCOL_VERSIONS,
} from '../../../shared/mcp/protocol.js';
import { statelessMeta, statelessRequestHeaders } from '../../../shared/mcp/stateless-request.js';
import { type UpstreamError, upstreamAborted, upstreamFailure } from '../../upstream/errors.js';
import type {
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../../upstream/json-rpc.js';
import type { RequestOptions, UpstreamSession, UpstreamSessionConfig } from './session.js';
import type { StatelessUpstream, StatelessUpstreamConfig } from './stateless.js';

/** The id prefix of the requests the gateway puts to a session client on a stateless upstream's
 *  behalf (its answers come back to this object, never to an upstream that has no session). */
export const GATEWAY_INPUT_ID_PREFIX = 'agent-gateway-input-';
/** Rounds of input one request may take before it fails. */
export const MAX_ROUNDS = 10;

const STATELESS_VERSION = STATELESS_PROTOCOL_VERSIONS[0];
const CLOSED = new Error('the session ended');

/** What the stateless upstream sees of the session's client. */
export interface SessionClient {
  /** The revision the session negotiated with its client. */
  readonly protocolVersion: string;
  readonly clientInfo: unknown;
  readonly capabilities: Readonly<Record<string, unknown>>;
}

export class StatelessSession implements UpstreamSession {
  readonly sessionId = undefined;
  readonly protocolVersion: string;
  onGone: (() => void) | undefined = undefined;
  readonly #exchange: (config: StatelessUpstreamConfig) => StatelessUpstream;
  readonly #config: UpstreamSessionConfig;
  readonly #client: SessionClient;
  readonly #closing = new AbortController();
  /** Set by the client's logging/setLevel; sent in every request's `_meta`. */
  #logLevel: string | undefined;
  /** The exchanges in flight, by the id of the client's request (a cancellation closes one). */
  readonly #inFlight = new Map<string, { close(): Promise<void> }>();
  /** The client's answers awaited, by the id of the gateway's request. */
  readonly #awaited = new Map<string, (response: JsonRpcResponse) => void>();

  constructor(
    exchange: (config: StatelessUpstreamConfig) => StatelessUpstream,
    config: UpstreamSessionConfig,
    client: SessionClient,
  ) {
    this.#exchange = exchange;
    this.#config = config;
    this.#client = client;
    this.protocolVersion = client.protocolVersion;
  }

  async request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    let params = isRecord(message.params) ? { ...message.params } : {};
    if (message.method === 'ping') return { jsonrpc: '2.0', id: message.id, result: {} };
    if (message.method === 'logging/setLevel' && typeof params.level === 'string') {
      this.#logLevel = params.level;
      return { jsonrpc: '2.0', id: message.id, result: {} };
    }
    for (let round = 0; round <= MAX_ROUNDS; round += 1) {
      const response = await this.#once(message, params, options);
      const result =
        'result' in response && isRecord(response.result) ? response.result : undefined;
      if (result?.resultType !== INPUT_REQUIRED_RESULT_TYPE) return asSessionResponse(response);
      const inputResponses = await this.#ask(result.inputRequests, options);
      params = {
        ...params,
        inputResponses,
        ...(typeof result.requestState === 'string' ? { requestState: result.requestState } : {}),
      };
    }
    throw upstreamFailure(`the upstream asked for input more than ${MAX_ROUNDS} times`);
  }

  async send(message: JsonRpcNotification | JsonRpcResponse): Promise<void> {
    if ('method' in message) {
      // No client notification travels in this era; a cancellation closes its request's stream.
      if (message.method === MCP_METHODS.CANCELLED && isRecord(message.params)) {
        const requestId = message.params.requestId;
        if (typeof requestId === 'string' || typeof requestId === 'number') {
          await this.#inFlight.get(String(requestId))?.close();
        }
      }
      return;
    }
    const id = String(message.id);
    const waiting = this.#awaited.get(id);
    if (waiting === undefined) return;
    this.#awaited.delete(id);
    waiting(message);
  }

  listen(
    onMessage: (message: JsonRpcMessage) => void,
    onEnd?: (error?: UpstreamError) => void,
  ): void {
    const exchange = this.#exchange(
      this.#exchangeConfig(MCP_METHODS.SUBSCRIPTIONS_LISTEN, undefined),
    );
    this.#closing.signal.addEventListener('abort', () => exchange.close(), { once: true });
    const listen: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: `agent-gateway-listen-${randomUUID()}`,
      method: MCP_METHODS.SUBSCRIPTIONS_LISTEN,
      params: {
        notifications: {
          toolsListChanged: true,
          promptsListChanged: true,
          resourcesListChanged: true,
        },
        _meta: this.#meta(undefined),
      },
    };
    exchange
      .stream(listen, (relayed) => {
        if (!('method' in relayed) || 'id' in relayed) return;
        if (relayed.method === MCP_METHODS.SUBSCRIPTIONS_ACKNOWLEDGED) return;
        onMessage(withoutSubscriptionId(relayed as JsonRpcNotification));
      })
      .then(
        () => onEnd?.(),
        (error: unknown) => onEnd?.(error as UpstreamError),
      );
  }

  async close(): Promise<void> {
    if (!this.#closing.signal.aborted) this.#closing.abort(CLOSED);
    this.#awaited.clear();
  }

  /** One stateless exchange of `message` with `params`. */
  async #once(
    message: JsonRpcRequest,
    params: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<JsonRpcResponse> {
    if (this.#closing.signal.aborted) throw upstreamAborted();
    const exchange = this.#exchange(this.#exchangeConfig(message.method, params));
    const stop = () => exchange.close();
    this.#closing.signal.addEventListener('abort', stop, { once: true });
    this.#inFlight.set(String(message.id), exchange);
    try {
      return await exchange.request(
        {
          jsonrpc: '2.0',
          id: message.id,
          method: message.method,
          params: { ...params, _meta: this.#meta(params._meta) },
        },
        {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.onMessage ? { onMessage: options.onMessage } : {}),
        },
      );
    } finally {
      this.#closing.signal.removeEventListener('abort', stop);
      if (this.#inFlight.get(String(message.id)) === exchange)
        this.#inFlight.delete(String(message.id));
    }
  }

  /** Puts the upstream's input requests to the client; resolves with its answers by key. */
  async #ask(requests: unknown, options: RequestOptions): Promise<Record<string, unknown>> {
    const asked = isRecord(requests) ? Object.entries(requests) : [];
    if (options.onMessage === undefined || asked.length === 0) {
      throw upstreamFailure('the upstream asked for input the client cannot be asked for here');
    }
    const answers = await Promise.all(
      asked.map(async ([key, request]) => {
        const question = isRecord(request) ? request : {};
        const id = `${GATEWAY_INPUT_ID_PREFIX}${randomUUID()}`;
        const answered = new Promise<JsonRpcResponse>((resolve, reject) => {
          this.#awaited.set(id, resolve);
          const abandon = () => {
            this.#awaited.delete(id);
            reject(upstreamAborted());
          };
          this.#closing.signal.addEventListener('abort', abandon, { once: true });
          options.signal?.addEventListener('abort', abandon, { once: true });
        });
        options.onMessage?.({
          jsonrpc: '2.0',
          id,
          method: String(question.method),
          params: question.params ?? {},
        } as JsonRpcRequest);
        const answer = await answered;
        return [key, 'result' in answer ? answer.result : undefined] as const;
      }),
    );
    // A question the client refused with an error has no answer: the upstream decides what then.
    return Object.fromEntries(answers.filter(([, answer]) => answer !== undefined));
  }

  #meta(own: unknown): Record<string, unknown> {
    return statelessMeta(own, {
      clientInfo: this.#client.clientInfo,
      capabilities: this.#client.capabilities,
      logLevel: this.#logLevel,
    });
  }

  #exchangeConfig(method: string, params: unknown): StatelessUpstreamConfig {
    return {
      ...this.#config,
      protocolVersion: STATELESS_VERSION,
      forwardedHeaders: [
        MCP_HEADERS.PROTOCOL_VERSION,
        STATELESS_VERSION,
        ...statelessRequestHeaders(method, params),
      ],
    };
  }
}

/** A result as the session era has it: without this era's own fields. */
function asSessionResponse(response: JsonRpcResponse): JsonRpcResponse {
  if (!('result' in response) || !isRecord(response.result)) return response;
  const { resultType: _type, ttlMs: _ttl, cacheScope: _scope, ...result } = response.result;
  return { ...response, result };
}

function withoutSubscriptionId(notification: JsonRpcNotification): JsonRpcNotification {
  if (!isRecord(notification.params) || !isRecord(notification.params._meta)) return notification;
  const { [MCP_META_KEYS.SUBSCRIPTION_ID]: _id, ...meta } = notification.params._meta;
  const { _meta: _old, ...params } = notification.params;
  return {
    ...notification,
    params: Object.keys(meta).length === 0 ? params : { ...params, _meta: meta },
  };
}
