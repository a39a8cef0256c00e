// One HTTP exchange with an upstream: a POST of one JSON-RPC message, read with an undici
// dispatch handler (no stream objects, the body is handled chunk by chunk as it arrives).
//
// Invariants:
// - The promise settles exactly once: with the response to `expectedId`, or with an UpstreamError.
//   Every failure after the request reached a socket aborts it, which destroys that socket, so
//   nothing half-read goes back into the pool.
// - Timeouts: from dispatch until the request is written on a connection (pool queue + connect),
//   `connectTimeoutMs`; from then until the response is complete (headers and body, or the
//   matching SSE event), `readTimeoutMs`. The abort signal is observed during both phases.
// - SSE: the exchange resolves as soon as the matching response event arrives; the rest of the
//   stream is drained for at most DRAIN_MS so that a server which closes the stream right after
//   its response (the SDK does) keeps the connection reusable, and is cut otherwise.
// - Relay mode (`onMessage` given, the MCP proxy's upstream sessions): every other message of the
//   SSE answer goes to `onMessage` in order; the read timeout becomes an idle timeout that restarts
//   with each event (a tool that keeps reporting progress is not cut; a silent one is), and
//   `maxResponseBytes` bounds each message instead of the whole body; a stream that ends or breaks
//   before the response after an event id (or, with no awaited response, at all) resolves without
//   a response but with its last event id, so the caller can resume it (GET + Last-Event-ID).
//   Without `onMessage` nothing of this runs and nothing more is allocated.
// - JSON lines (`jsonLines`, relay mode; the proxy's stateless exchanges): an `application/json`
//   body may hold several messages, one per line (json-lines.ts), read like an SSE stream's
//   events: relayed in order, the response ends it, each message bounded, the idle timer restarted
//   per message. With nothing awaited (a `subscriptions/listen` stream), its end is not an error.
import { type Dispatcher, Pool } from 'undici';
import { MCP_HEADERS } from '../../shared/mcp/protocol.js';
import { createEgressConnector, type UpstreamEgress } from './egress-connector.js';
import {
  fromTransportError,
  UpstreamError,
  upstreamAborted,
  upstreamFailure,
  upstreamTimeout,
} from './errors.js';
import { JsonLinesReader } from './json-lines.js';
import {
  classifyMessage,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcResponse,
  MESSAGE_KIND,
} from './json-rpc.js';
import { type SseEvent, SseParser } from './sse-parser.js';

/** How long the tail of an SSE stream may take after the response event before it is cut. */
export const DRAIN_MS = 250;

export interface ExchangeLimits {
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly maxResponseBytes: number;
}

export interface ExchangeOutcome {
  readonly status: number;
  /** The `Mcp-Session-Id` response header, if any. */
  readonly sessionId: string | undefined;
  /** The JSON-RPC response; undefined for a notification, a `skipStatus` answer, or (relay mode)
   *  an SSE stream that ended before its response and can be resumed. */
  readonly response: JsonRpcResponse | undefined;
  /** The SSE stream's last event id ('' when none): where a resumption starts. */
  readonly lastEventId: string;
  /** The stream's SSE `retry:` in ms (relay mode only; undefined when none was sent). */
  readonly retryMs: number | undefined;
}

export interface ExchangeRequest {
  readonly dispatcher: Dispatcher;
  readonly path: string;
  /** Flat header list: name, value, name, value… */
  readonly headers: string[];
  /** POST when absent (GET resumes or listens, DELETE ends a session: no body). */
  readonly method?: 'POST' | 'GET' | 'DELETE';
  readonly body?: string;
  /** The id of the request sent; undefined when a notification is sent (or, in relay mode, when
   *  a GET stream is only listened to). */
  readonly expectedId: JsonRpcId | undefined;
  /** An HTTP status whose body is skipped and resolved without a response (404 = session gone). */
  readonly skipStatus: number;
  readonly limits: ExchangeLimits;
  readonly signal: AbortSignal | undefined;
  /** A second signal observed like `signal` (a caller's, beside a session's own), so no linked
   *  AbortController is made per exchange. */
  readonly alsoSignal?: AbortSignal | undefined;
  /** Relay mode: receives, in order, every message of an SSE answer other than the awaited
   *  response. Called synchronously from the socket's data; must not throw or block. */
  readonly onMessage?: (message: JsonRpcMessage) => void;
  /** Relay mode: the longest silence between SSE events once the headers arrived; 0 for none (a
   *  standalone GET stream may be idle for hours). Default `limits.readTimeoutMs`. */
  readonly idleTimeoutMs?: number;
  /** Relay mode, resuming a stream: the Last-Event-ID the caller sent in `headers`; it stays the
   *  outcome's `lastEventId` until the resumed stream brings a newer one. */
  readonly lastEventId?: string;
  /** Relay mode: read an `application/json` body as newline-delimited messages (see above). */
  readonly jsonLines?: boolean;
}

const PHASE_CONNECT = 0;
const PHASE_READ = 1;
const PHASE_DRAIN = 2;

const MODE_NONE = 0;
const MODE_JSON = 1;
const MODE_SSE = 2;
const MODE_SKIP = 3;
const MODE_JSON_LINES = 4;

/** Reason given to undici when the exchange cancels its own request (never surfaces). */
const CANCELLED = new Error('upstream exchange cancelled');

/** A keep-alive pool for one upstream endpoint, and the request path of that endpoint. */
export interface UpstreamPool {
  readonly url: string;
  readonly pool: Pool;
  readonly path: string;
}

/** Opens the pool exchanges with the MCP endpoint `url` are dispatched on; throws
 *  MCP_UPSTREAM_ERROR for a URL that is not http(s). `readTimeoutMs` 0: the exchanges' own
 *  timers alone bound reading (relay mode's streams may be long). Its connections pass the
 *  egress check for `serverKey`. */
export function createUpstreamPool(
  url: string,
  options: {
    readonly serverKey: string;
    readonly egress: UpstreamEgress;
    readonly connectTimeoutMs: number;
    readonly readTimeoutMs: number;
    readonly maxConnections: number | null;
  },
): UpstreamPool {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw upstreamFailure('the upstream URL is invalid');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw upstreamFailure('the upstream URL is not http or https');
  }
  const pool = new Pool(parsed.origin, {
    connections: options.maxConnections,
    pipelining: 1,
    connect: createEgressConnector(options.egress, options.serverKey, options.connectTimeoutMs),
    headersTimeout: options.readTimeoutMs,
    bodyTimeout: options.readTimeoutMs,
  });
  return { url, pool, path: `${parsed.pathname}${parsed.search}` };
}

export function exchange(request: ExchangeRequest): Promise<ExchangeOutcome> {
  return new Promise<ExchangeOutcome>((resolve, reject) => {
    const handler = new ExchangeHandler(request, resolve, reject);
    handler.start();
  });
}

function onTimer(handler: ExchangeHandler): void {
  handler.timeout();
}

function mediaTypeEssence(value: string | string[] | undefined): string {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return '';
  const semicolon = raw.indexOf(';');
  return (semicolon < 0 ? raw : raw.slice(0, semicolon)).trim().toLowerCase();
}

function isJsonMediaType(essence: string): boolean {
  return essence === 'application/json' || essence === '' || essence.endsWith('+json');
}

class ExchangeHandler implements Dispatcher.DispatchHandler {
  readonly #request: ExchangeRequest;
  readonly #resolve: (outcome: ExchangeOutcome) => void;
  readonly #reject: (error: UpstreamError) => void;
  #controller: Dispatcher.DispatchController | null = null;
  #timer: NodeJS.Timeout | undefined = undefined;
  #phase = PHASE_CONNECT;
  #settled = false;
  #ended = false;
  #status = 0;
  #sessionId: string | undefined = undefined;
  #mode = MODE_NONE;
  #bytes = 0;
  #first: Buffer | null = null;
  #chunks: Buffer[] | null = null;
  #sse: SseParser | null = null;
  #lines: JsonLinesReader | null = null;
  #sseResult: JsonRpcResponse | UpstreamError | null = null;
  #lastEventId = '';
  #retryMs: number | undefined = undefined;
  readonly #relay: boolean;

  constructor(
    request: ExchangeRequest,
    resolve: (outcome: ExchangeOutcome) => void,
    reject: (error: UpstreamError) => void,
  ) {
    this.#request = request;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#relay = request.onMessage !== undefined;
    if (request.lastEventId !== undefined) this.#lastEventId = request.lastEventId;
  }

  start(): void {
    const request = this.#request;
    if (request.signal?.aborted || request.alsoSignal?.aborted) {
      this.#settled = true;
      this.#reject(upstreamAborted());
      return;
    }
    request.signal?.addEventListener('abort', this);
    request.alsoSignal?.addEventListener('abort', this);
    this.#timer = setTimeout(onTimer, request.limits.connectTimeoutMs, this);
    try {
      const method = request.method ?? 'POST';
      request.dispatcher.dispatch(
        this.#relay
          ? // The exchange's own idle timer governs a relayed stream, not the pool's body timeout.
            {
              path: request.path,
              method,
              headers: request.headers,
              body: request.body,
              bodyTimeout: 0,
            }
          : { path: request.path, method, headers: request.headers, body: request.body },
        this,
      );
    } catch (error) {
      this.#fail(fromTransportError(error));
    }
  }

  /** The abort signal's listener (an object listener: no closure per exchange). */
  handleEvent(): void {
    this.#fail(upstreamAborted());
  }

  timeout(): void {
    this.#timer = undefined;
    if (this.#phase === PHASE_DRAIN) {
      this.#cancel();
      return;
    }
    if (this.#phase === PHASE_CONNECT) {
      this.#fail(upstreamTimeout('no connection within the connect timeout'));
    } else if (this.#status === 0) {
      this.#fail(upstreamTimeout('no response headers within the read timeout'));
    } else if (this.#relay && this.#mode === MODE_SSE) {
      this.#fail(upstreamTimeout('no message within the read timeout', this.#status));
    } else {
      this.#fail(upstreamTimeout('response not complete within the read timeout', this.#status));
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#settled) {
      controller.abort(CANCELLED);
      return;
    }
    if (this.#phase === PHASE_CONNECT) {
      this.#phase = PHASE_READ;
      clearTimeout(this.#timer);
      this.#timer = setTimeout(onTimer, this.#request.limits.readTimeoutMs, this);
    }
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200 || this.#settled) return;
    const request = this.#request;
    this.#status = statusCode;
    const session = headers[MCP_HEADERS.SESSION_ID];
    this.#sessionId = Array.isArray(session) ? session[0] : session;
    const length = headers['content-length'];
    if (length !== undefined && Number(length) > request.limits.maxResponseBytes) {
      this.#fail(this.#tooLarge());
      return;
    }
    if (request.expectedId === undefined && !this.#relay) {
      if (statusCode >= 300) {
        this.#fail(upstreamFailure(`HTTP ${statusCode} to a notification`, statusCode));
        return;
      }
      this.#mode = MODE_SKIP;
      return;
    }
    if (statusCode === request.skipStatus) {
      this.#mode = MODE_SKIP;
      return;
    }
    const essence = mediaTypeEssence(headers['content-type']);
    if (essence === 'text/event-stream') {
      this.#mode = MODE_SSE;
      if (this.#relay) this.#startRelay();
      else this.#sse = new SseParser((event) => this.#onSseEvent(event));
    } else if (this.#relay && request.jsonLines === true && isJsonMediaType(essence)) {
      this.#mode = MODE_JSON_LINES;
      this.#startIdleTimer();
      this.#lines = new JsonLinesReader((value) => {
        this.#timer?.refresh();
        this.#bytes = 0;
        return this.#onMessageValue(value);
      });
    } else if (request.expectedId === undefined || request.method === 'GET') {
      // A GET (listen or resume) answers only with an event stream; a JSON body is an HTTP error.
      this.#fail(upstreamFailure(`HTTP ${statusCode} without an event stream`, statusCode));
    } else if (isJsonMediaType(essence)) {
      this.#mode = MODE_JSON;
    } else {
      this.#fail(upstreamFailure(`HTTP ${statusCode} with a ${essence} body`, statusCode));
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#bytes += chunk.length;
    if (this.#bytes > this.#request.limits.maxResponseBytes) {
      if (this.#phase === PHASE_DRAIN) this.#cancel();
      else this.#fail(this.#tooLarge());
      return;
    }
    if (this.#settled) return;
    if (this.#mode === MODE_JSON) {
      if (this.#first === null) this.#first = chunk;
      else if (this.#chunks === null) this.#chunks = [this.#first, chunk];
      else this.#chunks.push(chunk);
    } else if (this.#mode === MODE_SSE) {
      this.#sse!.push(chunk);
      this.#afterSse();
    } else if (this.#mode === MODE_JSON_LINES) {
      this.#lines!.push(chunk);
      this.#afterSse();
    }
  }

  onResponseEnd(): void {
    this.#ended = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#settled) return;
    switch (this.#mode) {
      case MODE_JSON:
        this.#finishJson();
        return;
      case MODE_SSE:
        this.#sse!.end();
        this.#afterSse();
        if (this.#settled) return;
        if (this.#relay && (this.#lastEventId !== '' || this.#request.expectedId === undefined)) {
          this.#succeed(undefined); // resumable: the caller goes on with GET + Last-Event-ID
          return;
        }
        this.#fail(upstreamFailure('SSE stream ended before the response', this.#status));
        return;
      case MODE_JSON_LINES:
        this.#endLines();
        return;
      default:
        this.#succeed(undefined);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#ended = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#settled) return;
    if (this.#relay && this.#mode === MODE_SSE && this.#lastEventId !== '') {
      this.#succeed(undefined); // a broken stream with an event id can be resumed like an ended one
      return;
    }
    this.#fail(fromTransportError(error));
  }

  /** Relay mode: from the headers on, the timer bounds the silence between two messages. */
  #startIdleTimer(): void {
    const idle = this.#request.idleTimeoutMs ?? this.#request.limits.readTimeoutMs;
    if (idle !== this.#request.limits.readTimeoutMs) {
      clearTimeout(this.#timer);
      this.#timer = idle > 0 ? setTimeout(onTimer, idle, this) : undefined;
    }
  }

  #endLines(): void {
    try {
      this.#lines!.end();
    } catch {
      this.#fail(
        upstreamFailure(
          this.#status >= 300
            ? `HTTP ${this.#status} with a non-JSON body`
            : 'response body is not JSON',
          this.#status,
        ),
      );
      return;
    }
    this.#afterSse();
    if (this.#settled) return;
    if (this.#request.expectedId === undefined) {
      this.#succeed(undefined);
      return;
    }
    this.#fail(
      upstreamFailure(
        this.#lines!.count === 0
          ? `HTTP ${this.#status} without a body`
          : 'the body ended before the response',
        this.#status,
      ),
    );
  }

  #startRelay(): void {
    this.#startIdleTimer();
    this.#sse = new SseParser(
      (event) => this.#onRelayEvent(event),
      (milliseconds) => {
        this.#retryMs = milliseconds;
      },
    );
  }

  /** Relay mode's event handler: ids and idle timer first, then one message at a time. */
  #onRelayEvent(event: SseEvent): boolean {
    this.#lastEventId = event.id;
    this.#timer?.refresh();
    // Bytes count from the last event on, so the limit bounds each message (see onResponseData).
    this.#bytes = 0;
    const data = event.data;
    if (data.length === 0 || event.event !== 'message') return false;
    const limit = this.#request.limits.maxResponseBytes;
    // UTF-16 units never outnumber UTF-8 bytes and are at most a third of them.
    if (data.length > limit || (data.length * 3 > limit && Buffer.byteLength(data) > limit)) {
      this.#sseResult = this.#tooLarge();
      return true;
    }
    return this.#onMessageData(data);
  }

  #onSseEvent(event: SseEvent): boolean {
    if (event.data.length === 0 || event.event !== 'message') return false; // priming, other types
    return this.#onMessageData(event.data);
  }

  /** One SSE message: the awaited response or a failure end the stream (true); a server message
   *  is relayed in relay mode and skipped otherwise (false). */
  #onMessageData(data: string): boolean {
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      this.#sseResult = upstreamFailure('SSE event data is not JSON', this.#status);
      return true;
    }
    return this.#onMessageValue(value);
  }

  /** One parsed message of an SSE stream or a JSON-lines body (see #onMessageData). */
  #onMessageValue(value: unknown): boolean {
    const expectedId = this.#request.expectedId;
    let kind = classifyMessage(value, expectedId ?? '');
    // A listened stream (relay mode, nothing awaited) relays every valid message.
    if (expectedId === undefined && kind !== MESSAGE_KIND.INVALID)
      kind = MESSAGE_KIND.SERVER_MESSAGE;
    switch (kind) {
      case MESSAGE_KIND.RESPONSE:
        this.#sseResult = value as JsonRpcResponse;
        return true;
      case MESSAGE_KIND.SERVER_MESSAGE: {
        const onMessage = this.#request.onMessage;
        if (onMessage === undefined) return false; // not relayed outside relay mode
        try {
          onMessage(value as JsonRpcMessage);
        } catch (error) {
          this.#sseResult = upstreamFailure(
            'relaying an upstream message failed',
            undefined,
            error,
          );
          return true;
        }
        return false;
      }
      case MESSAGE_KIND.FOREIGN_RESPONSE:
        this.#sseResult = upstreamFailure('response id does not match the request', this.#status);
        return true;
      default:
        this.#sseResult = upstreamFailure(
          this.#mode === MODE_SSE
            ? 'SSE event is not a JSON-RPC message'
            : 'response body is not a JSON-RPC response',
          this.#status,
        );
        return true;
    }
  }

  #afterSse(): void {
    const result = this.#sseResult;
    if (result === null) return;
    if (result instanceof UpstreamError) {
      this.#fail(result);
      return;
    }
    this.#succeed(result);
    if (!this.#ended) {
      this.#phase = PHASE_DRAIN;
      this.#timer = setTimeout(onTimer, DRAIN_MS, this);
    }
  }

  #finishJson(): void {
    const status = this.#status;
    const body = this.#chunks !== null ? Buffer.concat(this.#chunks) : this.#first;
    if (body === null || body.length === 0) {
      this.#fail(upstreamFailure(`HTTP ${status} without a body`, status));
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      this.#fail(
        upstreamFailure(
          status >= 300 ? `HTTP ${status} with a non-JSON body` : 'response body is not JSON',
          status,
        ),
      );
      return;
    }
    switch (classifyMessage(value, this.#request.expectedId!)) {
      case MESSAGE_KIND.RESPONSE:
        this.#succeed(value as JsonRpcResponse);
        return;
      case MESSAGE_KIND.FOREIGN_RESPONSE:
        this.#fail(upstreamFailure('response id does not match the request', status));
        return;
      default:
        this.#fail(
          upstreamFailure(
            status >= 300
              ? `HTTP ${status} without a JSON-RPC response`
              : 'response body is not a JSON-RPC response',
            status,
          ),
        );
    }
  }

  #tooLarge(): UpstreamError {
    return upstreamFailure(
      `${this.#relay && this.#mode === MODE_SSE ? 'an SSE message' : 'response body'} exceeds ${this.#request.limits.maxResponseBytes} bytes`,
      this.#status || undefined,
    );
  }

  #succeed(response: JsonRpcResponse | undefined): void {
    this.#settled = true;
    this.#request.signal?.removeEventListener('abort', this);
    this.#request.alsoSignal?.removeEventListener('abort', this);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#first = null;
    this.#chunks = null;
    this.#lines = null;
    this.#resolve({
      status: this.#status,
      sessionId: this.#sessionId,
      response,
      lastEventId: this.#lastEventId,
      retryMs: this.#retryMs,
    });
  }

  #fail(error: UpstreamError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#request.signal?.removeEventListener('abort', this);
    this.#request.alsoSignal?.removeEventListener('abort', this);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#first = null;
    this.#chunks = null;
    this.#reject(error);
    this.#cancel();
  }

  /** Aborts the request on its socket (the socket is destroyed, never returned to the pool). */
  #cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#ended && this.#controller !== null && !this.#controller.aborted) {
      this.#ended = true;
      this.#controller.abort(CANCELLED);
    }
  }
}
