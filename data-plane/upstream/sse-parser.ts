// Incremental parser for `text/event-stream` bodies, following the WHATWG HTML "event stream
// interpretation" rules: lines end with CRLF, LF or CR (also when a CRLF pair is split between
// chunks); `:` starts a comment; `data:` lines accumulate with `\n`; one leading space after the
// colon is dropped; a blank line dispatches the event; an event still open at end of stream is
// discarded. Bytes are decoded as UTF-8 with replacement, so no input makes it throw.
//
// The parser keeps no more than the unfinished line and the open event's data; the caller bounds
// the total size. `onEvent` returns true to stop parsing (the rest of the input is ignored).

export interface SseEvent {
  /** The `event:` field, `message` when absent. */
  readonly event: string;
  /** The joined `data:` lines. */
  readonly data: string;
  /** The last `id:` seen in the stream so far (the SSE "last event ID"), '' when none. */
  readonly id: string;
}

export type SseEventHandler = (event: SseEvent) => boolean | undefined;

const LF = 10;
const CR = 13;
const SPACE = 32;

export class SseParser {
  readonly #onEvent: SseEventHandler;
  readonly #decoder = new TextDecoder('utf-8');
  #pending = '';
  #skipLeadingLf = false;
  #data = '';
  #hasData = false;
  #eventType = '';
  #lastEventId = '';
  #stopped = false;

  constructor(onEvent: SseEventHandler) {
    this.#onEvent = onEvent;
  }

  /** True once `onEvent` asked to stop. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Feeds a chunk of the body (bytes are decoded incrementally; strings are taken as decoded). */
  push(chunk: Uint8Array | string): void {
    if (this.#stopped) return;
    const text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    this.#consume(text);
  }

  /** Signals the end of the body: an unterminated line or event is discarded (as in the spec). */
  end(): void {
    if (this.#stopped) return;
    const rest = this.#decoder.decode();
    if (rest.length > 0) this.#consume(rest);
    this.#pending = '';
    this.#data = '';
    this.#hasData = false;
    this.#eventType = '';
  }

  #consume(text: string): void {
    let buffer: string;
    let scanFrom: number;
    if (this.#pending.length > 0) {
      scanFrom = this.#pending.length;
      buffer = this.#pending + text;
      this.#pending = '';
    } else {
      scanFrom = 0;
      buffer = text;
    }
    let start = 0;
    const length = buffer.length;
    if (this.#skipLeadingLf && length > 0) {
      this.#skipLeadingLf = false;
      if (buffer.charCodeAt(0) === LF) {
        start = 1;
        if (scanFrom === 0) scanFrom = 1;
      }
    }
    let i = scanFrom;
    while (i < length) {
      const c = buffer.charCodeAt(i);
      if (c !== LF && c !== CR) {
        i++;
        continue;
      }
      this.#processLine(buffer.slice(start, i));
      if (this.#stopped) return;
      if (c === CR) {
        if (i + 1 < length) {
          if (buffer.charCodeAt(i + 1) === LF) i++;
        } else {
          this.#skipLeadingLf = true;
        }
      }
      i++;
      start = i;
    }
    if (start < length) this.#pending = start === 0 ? buffer : buffer.slice(start);
  }

  #processLine(line: string): void {
    if (line.length === 0) {
      this.#dispatch();
      return;
    }
    const colon = line.indexOf(':');
    if (colon === 0) return; // comment (keep-alive)
    let field: string;
    let value: string;
    if (colon < 0) {
      field = line;
      value = '';
    } else {
      field = line.slice(0, colon);
      const valueStart = line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1;
      value = line.slice(valueStart);
    }
    switch (field) {
      case 'data':
        if (this.#hasData) this.#data += `\n${value}`;
        else {
          this.#data = value;
          this.#hasData = true;
        }
        return;
      case 'event':
        this.#eventType = value;
        return;
      case 'id':
        if (!value.includes('\0')) this.#lastEventId = value;
        return;
      default:
        return; // `retry` and unknown fields: the gateway never reconnects a POST stream
    }
  }

  #dispatch(): void {
    if (!this.#hasData) {
      this.#eventType = '';
      return;
    }
    const event: SseEvent = {
      event: this.#eventType === '' ? 'message' : this.#eventType,
      data: this.#data,
      id: this.#lastEventId,
    };
    this.#data = '';
    this.#hasData = false;
    this.#eventType = '';
    if (this.#onEvent(event) === true) this.#stopped = true;
  }
}
