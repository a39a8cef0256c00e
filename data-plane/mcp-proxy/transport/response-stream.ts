// The two kinds of downstream stream of the Streamable HTTP transport.
//
// CallStream: the answer to one POST carrying requests. It starts undecided: when the response is
// the only message (the common case) it is sent as one `application/json` body, the cheapest
// answer a client can read; the moment something must go before it (a progress notification, a
// log message, the upstream's sampling or elicitation request, the progress of a held call) it
// becomes an SSE stream and the response is its last event. Both are allowed by the transport
// spec for any request. A POST carrying several requests (a 2025-03-26 batch) is SSE from the
// start and ends after its last response.
//
// ServerStream: the session's GET stream, for what the upstream sends outside any request.
//
// Neither writes after the client went away; `closed` and `onClose` let the proxy stop work that
// only that client was waiting for.
import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage } from './messages.js';
import type { ReplayLogs, StreamLog } from './replay.js';

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

function sseEvent(message: JsonRpcMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

abstract class DownstreamStream {
  protected readonly res: ServerResponse;
  protected readonly headers: Record<string, string>;
  #closed = false;
  readonly #onClose: (() => void)[] = [];

  constructor(res: ServerResponse, headers: Record<string, string>) {
    this.res = res;
    this.headers = headers;
    res.once('close', () => {
      this.#closed = true;
      // A resumable stream outlives its first connection: the client may come back for it.
      if (this.resumable) return;
      for (const listener of this.#onClose.splice(0)) listener();
    });
  }

  /** Whether the client can resume this stream after its connection broke. */
  protected get resumable(): boolean {
    return false;
  }

  /** The client went away or the stream ended. */
  get closed(): boolean {
    return this.#closed || this.res.writableEnded;
  }

  /** The HTTP response itself, for a stream that becomes another kind of answer (a stateless
   *  listen stream is a ServerStream on its POST's response). */
  get response(): ServerResponse {
    return this.res;
  }

  /** Runs once when the connection closes (immediately if it already has). */
  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#onClose.push(listener);
  }

  /** An SSE comment: keeps idle intermediaries from cutting a long wait. */
  keepAlive(): void {
    if (!this.closed && this.res.headersSent) this.res.write(': keep-alive\n\n');
  }
}

export class CallStream extends DownstreamStream {
  #sse: boolean;
  #pending: number;
  readonly #replay: ReplayLogs | undefined;
  /** The stream's event log once it is SSE on a session (resumable with Last-Event-ID). */
  #log: StreamLog | undefined;

  /**
   * `requests`: how many responses end the stream (more than one: SSE from the start);
   * `replay`: the session's logs, which make the stream resumable once it is SSE.
   */
  constructor(
    res: ServerResponse,
    headers: Record<string, string>,
    requests = 1,
    replay?: ReplayLogs,
  ) {
    super(res, headers);
    this.#pending = requests;
    this.#sse = false;
    this.#replay = replay;
    if (requests > 1) this.#startSse();
  }

  protected override get resumable(): boolean {
    return this.#log !== undefined && !this.#log.done;
  }

  /** Finished, or gone with no way back (not resumable). */
  override get closed(): boolean {
    if (this.#log !== undefined) return this.#log.done;
    return super.closed;
  }

  override keepAlive(): void {
    const sink = this.#log ? this.#log.sink : this.res;
    if (sink && !sink.writableEnded && sink.headersSent) sink.write(': keep-alive\n\n');
  }

  /** Whether the client accepts an event stream (else intermediate messages are dropped). */
  acceptsSse = true;

  get isSse(): boolean {
    return this.#sse;
  }

  /** A header of the answer (Mcp-Session-Id on initialize); only before anything is written. */
  setHeader(name: string, value: string): void {
    if (!this.res.headersSent) this.headers[name] = value;
  }

  /** A message that goes before the response: a notification or a server-initiated request. */
  send(message: JsonRpcMessage): boolean {
    if (this.closed) return false;
    if (!this.#sse) {
      if (!this.acceptsSse) return false;
      this.#startSse();
    }
    if (this.#log) this.#replay!.write(this.#log, JSON.stringify(message));
    else this.res.write(sseEvent(message));
    return true;
  }

  /** One response; the last one ends the stream. `status`: of a JSON answer (a stateless-era
   *  error relayed with the upstream's 4xx); an SSE stream has sent its 200 already. */
  respond(response: JsonRpcMessage, status = 200): void {
    if (this.closed) return;
    this.#pending -= 1;
    if (this.#log) {
      this.#replay!.write(this.#log, JSON.stringify(response));
      if (this.#pending <= 0) this.#replay!.finish(this.#log);
      return;
    }
    if (!this.#sse) {
      const body = JSON.stringify(response);
      this.res.writeHead(status, {
        ...this.headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      this.res.end(body);
      return;
    }
    this.res.write(sseEvent(response));
    if (this.#pending <= 0) this.res.end();
  }

  #startSse(): void {
    this.#sse = true;
    this.res.writeHead(200, { ...this.headers, ...SSE_HEADERS });
    this.res.flushHeaders();
    if (this.#replay) this.#log = this.#replay.open(this.res);
  }
}

/** Starts an SSE answer on `res` (a resumed stream, a GET stream). */
export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
}

export class ServerStream extends DownstreamStream {
  constructor(res: ServerResponse, headers: Record<string, string>) {
    super(res, headers);
    res.writeHead(200, { ...headers, ...SSE_HEADERS });
    res.flushHeaders();
  }

  send(message: JsonRpcMessage): boolean {
    if (this.closed) return false;
    this.res.write(sseEvent(message));
    return true;
  }

  end(): void {
    if (!this.closed) this.res.end();
  }
}
