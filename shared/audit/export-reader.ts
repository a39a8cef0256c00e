// Streaming reader of an audit export: a top-level JSON array read chunk by chunk. A byte-level
// state machine checks the full JSON grammar (RFC 8259) and cuts out each top-level element,
// which is then decoded and JSON.parse'd on its own, so memory stays bounded by the largest
// entry, never the file. Syntax errors report the entry index and the byte offset, line and
// column (columns count characters); a file cut off while it was written reports the entry it
// ends in. Structural bytes are ASCII, which never occur inside a multi-byte UTF-8 sequence, so
// scanning bytes is safe.

export interface ExportPosition {
  /** Byte offset from the start of the file (a leading BOM included). */
  readonly offset: number;
  /** 1-based. */
  readonly line: number;
  /** 1-based, in characters (code points). */
  readonly column: number;
}

/** A syntax problem in the export; `index` is the entry the reader was at (0-based). */
export class AuditExportSyntaxError extends Error {
  readonly code = 'AUDIT_MALFORMED_JSON';
  readonly index: number;
  readonly position: ExportPosition | null;

  constructor(message: string, index: number, position: ExportPosition | null) {
    super(message);
    this.name = 'AuditExportSyntaxError';
    this.index = index;
    this.position = position;
  }
}

export interface ReadAuditExportOptions {
  /** Largest accepted entry in bytes (default 16 MiB): bounds the reader's memory. */
  readonly maxEntryBytes?: number;
  /** Deepest accepted nesting inside an entry (default 256). */
  readonly maxDepth?: number;
}

export type ExportChunkSource = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

// Top level.
const T_START = 0;
const T_FIRST = 1;
const T_NEXT = 2;
const T_AFTER = 3;
const T_END = 4;
// Inside an entry.
const V_VALUE = 10;
const V_OBJ_FIRST = 11;
const V_OBJ_KEY = 12;
const V_COLON = 13;
const V_ARR_FIRST = 14;
const V_AFTER_VALUE = 15;
const V_STRING = 16;
const V_ESCAPE = 17;
const V_UNICODE = 18;
const V_LITERAL = 19;
const N_SIGN = 20;
const N_ZERO = 21;
const N_INT = 22;
const N_DOT = 23;
const N_FRAC = 24;
const N_EXP = 25;
const N_EXP_SIGN = 26;
const N_EXP_DIGITS = 27;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const LF = 0x0a;

const LITERALS: Record<number, Uint8Array> = {
  116: new TextEncoder().encode('true'),
  102: new TextEncoder().encode('false'),
  110: new TextEncoder().encode('null'),
};

const BOM = [0xef, 0xbb, 0xbf];
const ESCAPABLE = new Set([QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

function isWhitespace(b: number): boolean {
  return b === 0x20 || b === LF || b === 0x0d || b === 0x09;
}

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}

function isHexDigit(b: number): boolean {
  return isDigit(b) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46);
}

function describeByte(b: number): string {
  return b >= 0x21 && b <= 0x7e
    ? `'${String.fromCharCode(b)}'`
    : `byte 0x${b.toString(16).padStart(2, '0')}`;
}

function formatPosition(p: ExportPosition): string {
  return `line ${p.line}, column ${p.column} (byte ${p.offset})`;
}

/** Incremental splitter: push() chunks, get back the entries completed by each; end() at EOF. */
export class AuditExportTokenizer {
  private readonly maxEntryBytes: number;
  private readonly maxDepth: number;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private readonly encoder = new TextEncoder();

  private state = T_START;
  private index = 0;
  private sawContent = false;
  private bomBytes = 0;
  private pendingError: unknown = null;
  // Position of the first byte of the current chunk, and of the current line.
  private base = 0;
  private line = 1;
  private lineStart = 0;
  private continuationBytes = 0;
  // The entry being read.
  private stack: boolean[] = []; // true = object, false = array
  private stringIsKey = false;
  private unicodeLeft = 0;
  private literal: Uint8Array = LITERALS[0x74]!;
  private literalAt = 0;
  private parts: Uint8Array[] = [];
  private entryBytes = 0;
  private entryStart: ExportPosition | null = null;

  constructor(options: ReadAuditExportOptions = {}) {
    this.maxEntryBytes = options.maxEntryBytes ?? 16 * 1024 * 1024;
    this.maxDepth = options.maxDepth ?? 256;
  }

  push(input: Uint8Array | string): unknown[] {
    this.throwPending();
    const out: unknown[] = [];
    try {
      this.scan(typeof input === 'string' ? this.encoder.encode(input) : input, out);
    } catch (error) {
      // Entries completed before the error are delivered first; the error comes next.
      if (out.length === 0) throw error;
      this.pendingError = error;
    }
    return out;
  }

  private throwPending(): void {
    if (this.pendingError !== null) throw this.pendingError;
  }

  private scan(chunk: Uint8Array, out: unknown[]): void {
    let start = this.state >= V_VALUE ? 0 : -1; // where the current entry starts in this chunk
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      const b = chunk[i]!;
      switch (this.state) {
        case T_START:
          // A UTF-8 byte-order mark may precede the export; it does not count as a column.
          if (this.base + i === this.bomBytes && this.bomBytes < 3 && b === BOM[this.bomBytes]) {
            this.bomBytes++;
            this.lineStart = this.bomBytes;
            i++;
            continue;
          }
          if (this.bomBytes > 0 && this.bomBytes < 3) {
            throw this.fail('invalid byte-order mark at the start of the file', i);
          }
          if (isWhitespace(b)) break;
          this.sawContent = true;
          if (b === OPEN_BRACE) {
            // The console's "Export JSON Lines" file: it lacks the fields the hashes cover
            // (tenantId, the seal) and holds filtered entries, so it cannot be verified as is.
            const position = this.positionAt(i);
            throw new AuditExportSyntaxError(
              `this file is JSON Lines (one entry per line, as the console's Export JSON Lines writes for analysis), not the JSON array of a verifiable export: found '{' at ${formatPosition(position)} where an export opens with '['`,
              this.index,
              position,
            );
          }
          if (b !== OPEN_BRACKET) {
            throw this.fail(`expected '[' to open the export, found ${describeByte(b)}`, i);
          }
          this.state = T_FIRST;
          break;
        case T_FIRST:
        case T_NEXT:
          if (isWhitespace(b)) break;
          if (b === CLOSE_BRACKET) {
            if (this.state === T_NEXT) {
              throw this.fail(`expected entry ${this.index} after ',', found ']'`, i);
            }
            this.state = T_END;
            break;
          }
          start = i;
          this.entryStart = this.positionAt(i);
          this.parts = [];
          this.entryBytes = 0;
          this.stack = [];
          this.state = V_VALUE;
          continue;
        case T_AFTER:
          if (isWhitespace(b)) break;
          if (b === COMMA) this.state = T_NEXT;
          else if (b === CLOSE_BRACKET) this.state = T_END;
          else {
            throw this.fail(
              `expected ',' or ']' after entry ${this.index - 1}, found ${describeByte(b)}`,
              i,
            );
          }
          break;
        case T_END:
          if (isWhitespace(b)) break;
          throw this.fail(`unexpected ${describeByte(b)} after the closing ']' of the export`, i);
        case V_VALUE:
          if (isWhitespace(b)) break;
          if (b === OPEN_BRACE || b === OPEN_BRACKET) {
            if (this.stack.length >= this.maxDepth) {
              throw this.fail(`entry ${this.index} nests deeper than ${this.maxDepth} levels`, i);
            }
            this.stack.push(b === OPEN_BRACE);
            this.state = b === OPEN_BRACE ? V_OBJ_FIRST : V_ARR_FIRST;
          } else if (b === QUOTE) {
            this.stringIsKey = false;
            this.state = V_STRING;
          } else if (b === MINUS) {
            this.state = N_SIGN;
          } else if (b === 0x30) {
            this.state = N_ZERO;
          } else if (isDigit(b)) {
            this.state = N_INT;
          } else if (LITERALS[b] !== undefined) {
            this.literal = LITERALS[b]!;
            this.literalAt = 1;
            this.state = V_LITERAL;
          } else {
            throw this.fail(`expected a value, found ${describeByte(b)}`, i);
          }
          break;
        case V_OBJ_FIRST:
        case V_OBJ_KEY:
          if (isWhitespace(b)) break;
          if (b === QUOTE) {
            this.stringIsKey = true;
            this.state = V_STRING;
          } else if (b === CLOSE_BRACE && this.state === V_OBJ_FIRST) {
            if (this.closeValue(chunk, start, i + 1, out)) start = -1;
          } else {
            throw this.fail(
              `expected a property name in double quotes, found ${describeByte(b)}`,
              i,
            );
          }
          break;
        case V_COLON:
          if (isWhitespace(b)) break;
          if (b !== COLON)
            throw this.fail(`expected ':' after a property name, found ${describeByte(b)}`, i);
          this.state = V_VALUE;
          break;
        case V_ARR_FIRST:
          if (isWhitespace(b)) break;
          if (b === CLOSE_BRACKET) {
            if (this.closeValue(chunk, start, i + 1, out)) start = -1;
            break;
          }
          this.state = V_VALUE;
          continue;
        case V_AFTER_VALUE: {
          if (isWhitespace(b)) break;
          const inObject = this.stack[this.stack.length - 1]!;
          if (b === COMMA) {
            this.state = inObject ? V_OBJ_KEY : V_VALUE;
          } else if (b === (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) {
            if (this.closeValue(chunk, start, i + 1, out)) start = -1;
          } else {
            const expected = inObject ? "',' or '}'" : "',' or ']'";
            throw this.fail(`expected ${expected}, found ${describeByte(b)}`, i);
          }
          break;
        }
        case V_STRING:
          if (b >= 0x20 && b !== QUOTE && b !== BACKSLASH) {
            // Fast path through plain string bytes; none of them is a newline.
            let j = i + 1;
            let continuation = (b & 0xc0) === 0x80 ? 1 : 0;
            for (; j < n; j++) {
              const c = chunk[j]!;
              if (c < 0x20 || c === QUOTE || c === BACKSLASH) break;
              if ((c & 0xc0) === 0x80) continuation++;
            }
            this.continuationBytes += continuation;
            i = j;
            continue;
          }
          if (b === QUOTE) {
            if (this.stringIsKey) this.state = V_COLON;
            else if (this.endValue(chunk, start, i + 1, out)) start = -1;
          } else if (b === BACKSLASH) {
            this.state = V_ESCAPE;
          } else if (b < 0x20) {
            throw this.fail(`unescaped control character ${describeByte(b)} in a string`, i);
          }
          break;
        case V_ESCAPE:
          if (b === 0x75) {
            this.unicodeLeft = 4;
            this.state = V_UNICODE;
          } else if (ESCAPABLE.has(b)) {
            this.state = V_STRING;
          } else {
            throw this.fail(`invalid escape '\\${String.fromCharCode(b)}' in a string`, i);
          }
          break;
        case V_UNICODE:
          if (!isHexDigit(b))
            throw this.fail(`expected a hex digit in \\u escape, found ${describeByte(b)}`, i);
          if (--this.unicodeLeft === 0) this.state = V_STRING;
          break;
        case V_LITERAL:
          if (b !== this.literal[this.literalAt]) {
            throw this.fail(
              `invalid literal: expected '${new TextDecoder().decode(this.literal)}'`,
              i,
            );
          }
          if (++this.literalAt === this.literal.length && this.endValue(chunk, start, i + 1, out)) {
            start = -1;
          }
          break;
        case N_SIGN:
          if (b === 0x30) this.state = N_ZERO;
          else if (isDigit(b)) this.state = N_INT;
          else throw this.fail(`expected a digit after '-', found ${describeByte(b)}`, i);
          break;
        case N_ZERO:
        case N_INT:
        case N_FRAC:
        case N_EXP_DIGITS:
          if (isDigit(b)) {
            if (this.state === N_ZERO) throw this.fail('numbers must not have leading zeros', i);
            break;
          }
          if (b === DOT && (this.state === N_ZERO || this.state === N_INT)) {
            this.state = N_DOT;
            break;
          }
          if ((b === 0x65 || b === 0x45) && this.state !== N_EXP_DIGITS) {
            this.state = N_EXP;
            break;
          }
          // The byte ends the number and is read again in the state that follows it.
          if (this.endValue(chunk, start, i, out)) start = -1;
          continue;
        case N_DOT:
          if (!isDigit(b))
            throw this.fail(`expected a digit after '.', found ${describeByte(b)}`, i);
          this.state = N_FRAC;
          break;
        case N_EXP:
          if (b === PLUS || b === MINUS) this.state = N_EXP_SIGN;
          else if (isDigit(b)) this.state = N_EXP_DIGITS;
          else throw this.fail(`expected a digit in the exponent, found ${describeByte(b)}`, i);
          break;
        case N_EXP_SIGN:
          if (!isDigit(b))
            throw this.fail(`expected a digit in the exponent, found ${describeByte(b)}`, i);
          this.state = N_EXP_DIGITS;
          break;
      }
      if (b === LF) {
        this.line++;
        this.lineStart = this.base + i + 1;
        this.continuationBytes = 0;
      } else if ((b & 0xc0) === 0x80) {
        this.continuationBytes++;
      }
      i++;
    }
    if (this.state >= V_VALUE && start >= 0) {
      this.keepPart(chunk.slice(start, n));
    }
    this.base += n;
  }

  /** Call at end of input: throws when the export is incomplete. */
  end(): void {
    this.throwPending();
    const where = this.positionAt(0);
    switch (this.state) {
      case T_END:
        return;
      case T_START:
        throw new AuditExportSyntaxError(
          this.sawContent
            ? "file ends before the export's opening '['"
            : "the export is empty: expected a JSON array ('[]' when there are no entries)",
          0,
          where,
        );
      case T_FIRST:
        throw new AuditExportSyntaxError(
          `file ends after the opening '[' at ${formatPosition(where)}: the export was cut off`,
          0,
          where,
        );
      case T_NEXT:
      case T_AFTER:
        throw new AuditExportSyntaxError(
          `file ends after entry ${this.index - 1}, before the closing ']' at ${formatPosition(where)}: the export was cut off`,
          this.index,
          where,
        );
      default:
        throw new AuditExportSyntaxError(
          `file ends inside entry ${this.index}, which starts at ${formatPosition(this.entryStart!)}: the export was cut off`,
          this.index,
          where,
        );
    }
  }

  // Position of byte i of the current chunk; only valid for bytes not yet counted.
  private positionAt(i: number): ExportPosition {
    const offset = this.base + i;
    return {
      offset,
      line: this.line,
      column: offset - this.lineStart - this.continuationBytes + 1,
    };
  }

  private fail(message: string, i: number): AuditExportSyntaxError {
    const position = this.positionAt(i);
    const where = this.state >= V_VALUE ? `entry ${this.index}: ` : '';
    return new AuditExportSyntaxError(
      `${where}${message} at ${formatPosition(position)}`,
      this.index,
      position,
    );
  }

  private keepPart(part: Uint8Array): void {
    this.entryBytes += part.length;
    if (this.entryBytes > this.maxEntryBytes) {
      throw new AuditExportSyntaxError(
        `entry ${this.index}, which starts at ${formatPosition(this.entryStart!)}, is larger than ${this.maxEntryBytes} bytes`,
        this.index,
        this.entryStart,
      );
    }
    this.parts.push(part);
  }

  // A closing bracket: pop, then the container is a finished value.
  private closeValue(chunk: Uint8Array, start: number, end: number, out: unknown[]): boolean {
    this.stack.pop();
    return this.endValue(chunk, start, end, out);
  }

  // A value ended just before `end`; true when that completed the entry.
  private endValue(chunk: Uint8Array, start: number, end: number, out: unknown[]): boolean {
    if (this.stack.length > 0) {
      this.state = V_AFTER_VALUE;
      return false;
    }
    this.keepPart(chunk.subarray(start, end));
    out.push(this.parseEntry());
    this.parts = [];
    this.entryBytes = 0;
    this.index++;
    this.state = T_AFTER;
    return true;
  }

  private parseEntry(): unknown {
    const bytes = this.parts.length === 1 ? this.parts[0]! : concat(this.parts, this.entryBytes);
    let text: string;
    try {
      text = this.decoder.decode(bytes);
    } catch {
      throw new AuditExportSyntaxError(
        `entry ${this.index}, which starts at ${formatPosition(this.entryStart!)}, is not valid UTF-8`,
        this.index,
        this.entryStart,
      );
    }
    return JSON.parse(text);
  }
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}

/**
 * The entries of a JSON-array export, parsed one at a time from a stream of chunks (a Node
 * Readable, a web stream, an array of strings). Throws AuditExportSyntaxError on malformed input;
 * errors of the source itself (I/O) pass through unchanged.
 */
export async function* readAuditExport(
  source: ExportChunkSource,
  options?: ReadAuditExportOptions,
): AsyncGenerator<unknown, void, undefined> {
  const tokenizer = new AuditExportTokenizer(options);
  for await (const chunk of source) {
    for (const entry of tokenizer.push(chunk)) yield entry;
  }
  tokenizer.end();
}
