// One downstream request of MCP's stateless era (2026-07-28) sent upstream: a POST that stands
// alone, with no session to open, resume or end. It carries what the client's request carried
// for intermediaries (MCP-Protocol-Version, Mcp-Method, Mcp-Name and every Mcp-Param-* header,
// as the client sent them: the transport checked the first three against the body, the upstream
// checks its own tool parameters) and the gateway's token for the upstream, never the client's.
// The body goes as the client sent it, `_meta` included, so the upstream sees the client's
// revision, identity and capabilities.
//
// It implements the upstream-session interface the proxy's governance already drives (tools/call,
// relaying), so a stateless call is governed by the same code as a call on a session:
// - `request`: the answer's messages before the response (progress, log messages) go to
//   `onMessage` in order, from an SSE stream or a JSON-lines body (../../upstream/json-lines.ts);
//   the HTTP status of the answer is kept (`status`), because in this era it carries meaning the
//   client reads (404 with -32601, 400 with -32020 to -32022);
// - `listen`: a `subscriptions/listen` stream, relayed until either side closes it;
// - `send`: there is nothing to send to: the upstream never sends a request on its own in this
//   era (its questions come back as InputRequiredResult), so answers have no destination;
// - `close`: aborts what is in flight (the client closing its stream cancels the request).
import { MCP_ACCEPT } from '../../../shared/mcp/protocol.js';
import { upstreamAborted, upstreamFailure } from '../../upstream/errors.js';
import { type ExchangeLimits, exchange, type UpstreamPool } from '../../upstream/exchange.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../../upstream/json-rpc.js';
import type { RequestOptions, UpstreamSession, UpstreamSessionConfig } from './session.js';

export interface StatelessUpstreamConfig extends UpstreamSessionConfig {
  /** The request's revision (its MCP-Protocol-Version). */
  readonly protocolVersion: string;
  /** The client's headers that travel on: flat list of lower-case names and values. */
  readonly forwardedHeaders: readonly string[];
}

export class StatelessUpstream implements UpstreamSession {
  readonly sessionId = undefined;
  readonly protocolVersion: string;
  onGone: (() => void) | undefined = undefined;
  /** The HTTP status of the last answer (0 before one). */
  status = 0;
  readonly #target: UpstreamPool;
  readonly #config: StatelessUpstreamConfig;
  readonly #limits: ExchangeLimits;
  /** Aborted by close(): what is in flight stops. The proxy's per-request session object
   *  shares it as its own `closed` (one controller per request, not two). */
  readonly closing = new AbortController();

  constructor(target: UpstreamPool, config: StatelessUpstreamConfig) {
    this.#target = target;
    this.#config = config;
    this.protocolVersion = config.protocolVersion;
    this.#limits = {
      connectTimeoutMs: config.connectTimeoutMs,
      readTimeoutMs: config.readTimeoutMs,
      maxResponseBytes: config.maxMessageBytes,
    };
  }

  async request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    if (this.closing.signal.aborted) throw upstreamAborted();
    const outcome = await exchange({
      dispatcher: this.#target.pool,
      path: this.#target.path,
      headers: await this.#headers(),
      body: JSON.stringify(message),
      expectedId: message.id,
      skipStatus: 0,
      limits: this.#limits,
      signal: this.closing.signal,
      alsoSignal: options.signal,
      onMessage: options.onMessage ?? ignore,
      jsonLines: true,
    });
    this.status = outcome.status;
    // No resumption in this era: a stream that ended before its response is a failure.
    if (outcome.response === undefined) {
      throw upstreamFailure('the answer ended before the response', outcome.status);
    }
    return outcome.response;
  }

  /**
   * Sends `message` (subscriptions/listen) and relays every message of its answer until the
   * upstream ends it or close() is called. Resolves with the HTTP status of the answer.
   */
  async stream(
    message: JsonRpcRequest,
    onMessage: (message: JsonRpcMessage) => void,
  ): Promise<number> {
    if (this.closing.signal.aborted) throw upstreamAborted();
    try {
      const outcome = await exchange({
        dispatcher: this.#target.pool,
        path: this.#target.path,
        headers: await this.#headers(),
        body: JSON.stringify(message),
        expectedId: undefined,
        skipStatus: 0,
        limits: this.#limits,
        signal: this.closing.signal,
        onMessage,
        idleTimeoutMs: 0,
        jsonLines: true,
      });
      this.status = outcome.status;
      return outcome.status;
    } catch (error) {
      if (this.closing.signal.aborted) return this.status;
      throw error;
    }
  }

  async send(): Promise<void> {
    throw upstreamFailure('a stateless upstream takes no message outside a request');
  }

  listen(): void {
    // Nothing to open: change notifications come on subscriptions/listen streams (stream()).
  }

  async close(): Promise<void> {
    // A reason of our own: an abort without one builds a DOMException (a stack trace) each time.
    if (!this.closing.signal.aborted) this.closing.abort(CLOSED);
  }

  async #headers(): Promise<string[]> {
    const headers = ['content-type', 'application/json', 'accept', MCP_ACCEPT.POST];
    headers.push(...this.#config.forwardedHeaders);
    const authorization = this.#config.authorization;
    if (authorization !== undefined) {
      const token = await authorization();
      if (token !== undefined) headers.push('authorization', `Bearer ${token}`);
    }
    return headers;
  }
}

function ignore(): void {}

const CLOSED = new Error('the stateless request ended');
