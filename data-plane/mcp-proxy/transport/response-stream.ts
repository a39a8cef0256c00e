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
import type { JsonRpcMessage } from './protocol.js';

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
      for (const listener of this.#onClose.splice(0)) listener();
    });
  }

  /** The client went away or the stream ended. */
  get closed(): boolean {
    return this.#closed || this.res.writableEnded;
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

  /** `requests`: how many responses end the stream (more than one: SSE from the start). */
  constructor(res: ServerResponse, headers: Record<string, string>, requests = 1) {
    super(res, headers);
    this.#pending = requests;
    this.#sse = false;
    if (requests > 1) this.#startSse();
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
    this.res.write(sseEvent(message));
    return true;
  }

  /** One response; the last one ends the stream. */
  respond(response: JsonRpcMessage): void {
    if (this.closed) return;
    this.#pending -= 1;
    if (!this.#sse) {
      const body = JSON.stringify(response);
      this.res.writeHead(200, {
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
  }
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
