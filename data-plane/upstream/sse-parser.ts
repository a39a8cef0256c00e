// Incremental reader of `text/event-stream` bodies: bytes in, events out. The line and field rules
// (CRLF/LF/CR endings also split between chunks, comments, joined `data:` lines, one dropped space
// after the colon, an event still open at end of stream discarded) are eventsource-parser's; it is
// pinned to 3.x because 4.x needs Node 22 and 3.x runs on Node 18+. This adapter adds what the
// gateway relies on beyond the library:
// - bytes are decoded as UTF-8 with replacement (also when a character is split between chunks),
//   so no input makes it throw;
// - `id` is the stream's last event ID, carried from event to event as the WHATWG spec says (the
//   library reports only the id set inside each event; an `id:` in a block without data is lost);
// - `onEvent` returning true stops parsing: later events, also from the same chunk, are dropped;
// - a CR that ends the stream still ends its line (the library waits for a possible LF);
// - an optional `onRetry` hears the stream's `retry:` field (the reconnection delay a resumable
//   MCP stream announces); without it the parser is built exactly as before.
// The parser keeps only the unfinished line and the open event's data; the caller bounds the size.

import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';

export interface SseEvent {
  /** The `event:` field, `message` when absent. */
  readonly event: string;
  /** The joined `data:` lines. */
  readonly data: string;
  /** The last `id:` seen in the stream so far (the SSE "last event ID"), '' when none. */
  readonly id: string;
}

export type SseEventHandler = (event: SseEvent) => boolean | undefined;

const CR = 13;

export class SseParser {
  readonly #onEvent: SseEventHandler;
  readonly #decoder = new TextDecoder('utf-8');
  readonly #parser: EventSourceParser;
  #lastEventId = '';
  #endsWithCr = false;
  #stopped = false;

  constructor(onEvent: SseEventHandler, onRetry?: (milliseconds: number) => void) {
    this.#onEvent = onEvent;
    const dispatch = (message: EventSourceMessage) => this.#dispatch(message);
    this.#parser = createParser(
      onRetry === undefined
        ? { onEvent: dispatch }
        : {
            onEvent: dispatch,
            onRetry: (milliseconds) => {
              if (!this.#stopped) onRetry(milliseconds);
            },
          },
    );
  }

  /** True once `onEvent` asked to stop. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Feeds a chunk of the body (bytes are decoded incrementally; strings are taken as decoded). */
  push(chunk: Uint8Array | string): void {
    if (this.#stopped) return;
    this.#feed(typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true }));
  }

  /** Signals the end of the body: an unterminated line or event is discarded (as in the spec). */
  end(): void {
    if (this.#stopped) return;
    this.#feed(this.#decoder.decode());
    // CR and CRLF end a line alike, so completing a final CR lets the library finish that line.
    if (this.#endsWithCr && !this.#stopped) this.#parser.feed('\n');
    this.#endsWithCr = false;
    this.#parser.reset();
  }

  #feed(text: string): void {
    if (text.length === 0) return;
    this.#endsWithCr = text.charCodeAt(text.length - 1) === CR;
    this.#parser.feed(text);
  }

  #dispatch(message: EventSourceMessage): void {
    if (this.#stopped) return;
    if (message.id !== undefined) this.#lastEventId = message.id;
    const event: SseEvent = {
      event: message.event ?? 'message',
      data: message.data,
      id: this.#lastEventId,
    };
    if (this.#onEvent(event) === true) this.#stopped = true;
  }
}
