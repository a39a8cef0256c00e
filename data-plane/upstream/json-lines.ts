// Incremental reader of an `application/json` body that may hold several JSON-RPC messages, one
// per line. MCP 2026-07-28 servers answer a request with one JSON object or an SSE stream, but
// some (the conformance project's reference server among them) write a tool's log messages, or a
// whole `subscriptions/listen` stream, as newline-delimited JSON under `application/json`. Each
// complete line that parses is a message, handed on as it arrives (a listen stream stays open for
// hours). A body whose first line does not parse alone is ordinary pretty-printed JSON: from then
// on it is only gathered, and parsed once at the end, so the cost stays linear in the body.
// Pure apart from the callback; the caller bounds the size.
import { StringDecoder } from 'node:string_decoder';

/** Receives each message in order; returning true stops the reader (later text is ignored). */
export type JsonValueHandler = (value: unknown) => boolean;

export class JsonLinesReader {
  readonly #onValue: JsonValueHandler;
  readonly #decoder = new StringDecoder('utf8');
  #pending = '';
  /** The body is one JSON text over several lines: gathered, parsed at the end. */
  #whole = false;
  #stopped = false;
  /** Messages handed on so far. */
  count = 0;

  constructor(onValue: JsonValueHandler) {
    this.#onValue = onValue;
  }

  push(chunk: Buffer): void {
    if (this.#stopped) return;
    this.#pending += this.#decoder.write(chunk);
    if (this.#whole) return;
    let newline = this.#pending.indexOf('\n');
    while (newline >= 0 && !this.#stopped) {
      const line = this.#pending.slice(0, newline).trim();
      if (line !== '') {
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          // Not a message on its own line: one JSON text spread over lines.
          this.#whole = true;
          return;
        }
        this.#emit(value);
      }
      this.#pending = this.#pending.slice(newline + 1);
      newline = this.#pending.indexOf('\n');
    }
  }

  /** The end of the body; throws SyntaxError when what is left is not JSON. */
  end(): void {
    if (this.#stopped) return;
    this.#pending += this.#decoder.end();
    const rest = this.#pending.trim();
    this.#pending = '';
    if (rest !== '') this.#emit(JSON.parse(rest));
  }

  #emit(value: unknown): void {
    this.count += 1;
    if (this.#onValue(value)) this.#stopped = true;
  }
}
