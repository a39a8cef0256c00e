// The `matches` regex subset, run by our own matcher so that matching is linear in the input.
//
// Patterns are parsed into a small AST, compiled to a Thompson NFA and simulated with a lazily
// built DFA (each DFA state is a set of NFA states; transitions are cached per UTF-16 code unit).
// No backtracking ever happens, so `(a+)+$` on `aaaa…b` runs in time proportional to the input.
// Accepted syntax means exactly what JavaScript's `RegExp` (no flags) means; anything outside the
// subset — backreferences, lookaround, word boundaries, named groups, flags — is rejected, as are
// patterns longer than MAX_PATTERN_LENGTH or whose NFA exceeds MAX_NFA_STATES.

export const MAX_PATTERN_LENGTH = 256;
const MAX_NFA_STATES = 4096;
const MAX_REPEAT = 100;
const MAX_CACHED_DFA_STATES = 2048;
const MAX_HIGH_TRANSITIONS = 256;
const MAX_CODE_UNIT = 0xffff;

export interface RegexError {
  readonly offset: number;
  readonly message: string;
}

export type RegexCompileResult =
  | { readonly ok: true; readonly test: (input: string) => boolean }
  | { readonly ok: false; readonly error: RegexError };

type Ranges = readonly number[];

type RNode =
  | { readonly t: 'set'; readonly ranges: Ranges }
  | { readonly t: 'seq'; readonly items: readonly RNode[] }
  | { readonly t: 'alt'; readonly options: readonly RNode[] }
  | { readonly t: 'repeat'; readonly node: RNode; readonly min: number; readonly max: number }
  | { readonly t: 'bol' }
  | { readonly t: 'eol' };

class RegexSyntaxError extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

const DIGIT: Ranges = [0x30, 0x39];
const WORD: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
const SPACE: Ranges = normalize([
  0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f,
  0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
]);
const LINE_TERMINATORS: Ranges = [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029];
const DOT: Ranges = complement(LINE_TERMINATORS);

function normalize(ranges: readonly number[]): number[] {
  const pairs: [number, number][] = [];
  for (let i = 0; i + 1 < ranges.length; i += 2) pairs.push([ranges[i]!, ranges[i + 1]!]);
  pairs.sort((x, y) => x[0] - y[0]);
  const out: number[] = [];
  for (const [lo, hi] of pairs) {
    const last = out.length - 1;
    if (last > 0 && lo <= out[last]! + 1) out[last] = Math.max(out[last]!, hi);
    else out.push(lo, hi);
  }
  return out;
}

function complement(ranges: Ranges): number[] {
  const sorted = normalize(ranges);
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < sorted.length; i += 2) {
    if (sorted[i]! > next) out.push(next, sorted[i]! - 1);
    next = sorted[i + 1]! + 1;
  }
  if (next <= MAX_CODE_UNIT) out.push(next, MAX_CODE_UNIT);
  return out;
}

class PatternParser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): RNode {
    const node = this.parseAlt(0);
    if (this.i < this.src.length) throw this.fail(`unmatched ')'`);
    return node;
  }

  private fail(message: string, offset = this.i): RegexSyntaxError {
    return new RegexSyntaxError(offset, message);
  }

  private parseAlt(depth: number): RNode {
    const options = [this.parseSeq(depth)];
    while (this.src[this.i] === '|') {
      this.i += 1;
      options.push(this.parseSeq(depth));
    }
    return options.length === 1 ? options[0]! : { t: 'alt', options };
  }

  private parseSeq(depth: number): RNode {
    const items: RNode[] = [];
    while (this.i < this.src.length) {
      const ch = this.src[this.i]!;
      if (ch === '|' || ch === ')') break;
      const start = this.i;
      const atom = this.parseAtom(depth);
      items.push(this.parseQuantifier(atom, start));
    }
    return items.length === 1 ? items[0]! : { t: 'seq', items };
  }

  private parseQuantifier(atom: RNode, atomStart: number): RNode {
    const ch = this.src[this.i];
    let min: number;
    let max: number;
    if (ch === '*' || ch === '+' || ch === '?') {
      this.i += 1;
      min = ch === '+' ? 1 : 0;
      max = ch === '?' ? 1 : Number.POSITIVE_INFINITY;
    } else if (ch === '{') {
      const match = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(this.src.slice(this.i));
      if (!match) throw this.fail(`'{' must start a quantifier {n}, {n,} or {n,m}; write \\{`);
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[3] ? Number(match[3]) : Number.POSITIVE_INFINITY;
      if (max < min) throw this.fail('quantifier range is out of order');
      if (min > MAX_REPEAT || (max !== Number.POSITIVE_INFINITY && max > MAX_REPEAT)) {
        throw this.fail(`repetition counts are limited to ${MAX_REPEAT}`);
      }
      this.i += match[0].length;
    } else {
      return atom;
    }
    if (atom.t === 'bol' || atom.t === 'eol') throw this.fail('nothing to repeat', atomStart);
    if (this.src[this.i] === '?') this.i += 1; // lazy: irrelevant to a yes/no match
    const next = this.src[this.i];
    if (next === '*' || next === '+' || next === '?' || next === '{') {
      throw this.fail('nothing to repeat');
    }
    return { t: 'repeat', node: atom, min, max };
  }

  private parseAtom(depth: number): RNode {
    const src = this.src;
    const ch = src[this.i]!;
    switch (ch) {
      case '(': {
        const open = this.i;
        if (depth >= 32) throw this.fail('groups are nested too deeply');
        this.i += 1;
        if (src[this.i] === '?') {
          if (src.startsWith('?:', this.i)) {
            this.i += 2;
          } else if (/^\?(=|!|<=|<!)/.test(src.slice(this.i, this.i + 3))) {
            throw this.fail('lookaround assertions are not supported (not linear-time)', open);
          } else if (src[this.i + 1] === '<') {
            throw this.fail('named groups are not supported; use (?:…)', open);
          } else {
            throw this.fail('unsupported group syntax', open);
          }
        }
        const inner = this.parseAlt(depth + 1);
        if (src[this.i] !== ')') throw this.fail(`unterminated group`, open);
        this.i += 1;
        return inner;
      }
      case '[':
        return this.parseClass();
      case '.':
        this.i += 1;
        return { t: 'set', ranges: DOT };
      case '^':
        this.i += 1;
        return { t: 'bol' };
      case '$':
        this.i += 1;
        return { t: 'eol' };
      case '\\':
        return { t: 'set', ranges: this.parseEscape(false) };
      case '*':
      case '+':
      case '?':
        throw this.fail('nothing to repeat');
      case '{':
      case '}':
      case ']':
        throw this.fail(`write \\${ch} for a literal '${ch}'`);
      default:
        this.i += 1;
        return { t: 'set', ranges: [ch.charCodeAt(0), ch.charCodeAt(0)] };
    }
  }

  private parseClass(): RNode {
    const open = this.i;
    this.i += 1;
    let negate = false;
    if (this.src[this.i] === '^') {
      negate = true;
      this.i += 1;
    }
    const ranges: number[] = [];
    for (;;) {
      if (this.i >= this.src.length) throw this.fail('unterminated character class', open);
      if (this.src[this.i] === ']') break;
      const lo = this.parseClassAtom();
      if (
        this.src[this.i] === '-' &&
        this.src[this.i + 1] !== ']' &&
        this.i + 1 < this.src.length
      ) {
        const dash = this.i;
        this.i += 1;
        const hi = this.parseClassAtom();
        if (lo.length !== 2 || hi.length !== 2 || lo[0] !== lo[1] || hi[0] !== hi[1]) {
          throw this.fail('a range needs single characters at both ends', dash);
        }
        if (hi[0]! < lo[0]!) throw this.fail('range out of order in character class', dash);
        ranges.push(lo[0]!, hi[0]!);
      } else {
        ranges.push(...lo);
      }
    }
    this.i += 1;
    return { t: 'set', ranges: negate ? complement(ranges) : normalize(ranges) };
  }

  private parseClassAtom(): Ranges {
    const ch = this.src[this.i]!;
    if (ch === '\\') return this.parseEscape(true);
    this.i += 1;
    return [ch.charCodeAt(0), ch.charCodeAt(0)];
  }

  private parseEscape(inClass: boolean): Ranges {
    const at = this.i;
    const ch = this.src[this.i + 1];
    if (ch === undefined) throw this.fail('pattern ends with a lone backslash', at);
    this.i += 2;
    switch (ch) {
      case 'd':
        return DIGIT;
      case 'D':
        return complement(DIGIT);
      case 'w':
        return WORD;
      case 'W':
        return complement(WORD);
      case 's':
        return SPACE;
      case 'S':
        return complement(SPACE);
      case 't':
        return [9, 9];
      case 'n':
        return [10, 10];
      case 'v':
        return [11, 11];
      case 'f':
        return [12, 12];
      case 'r':
        return [13, 13];
      case '0':
        if (/[0-9]/.test(this.src[this.i] ?? ''))
          throw this.fail('octal escapes are not supported', at);
        return [0, 0];
      case 'x':
      case 'u': {
        const len = ch === 'x' ? 2 : 4;
        const hex = this.src.slice(this.i, this.i + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) {
          throw this.fail(`\\${ch} needs ${len} hexadecimal digits`, at);
        }
        this.i += len;
        const code = Number.parseInt(hex, 16);
        return [code, code];
      }
      case 'k':
        throw this.fail('backreferences are not supported (not linear-time)', at);
      case 'b':
      case 'B':
        throw this.fail(
          inClass ? 'write \\x08 for a backspace' : 'word boundaries are not supported',
          at,
        );
      default:
        if (ch >= '1' && ch <= '9') {
          throw this.fail('backreferences are not supported (not linear-time)', at);
        }
        if (/[A-Za-z0-9]/.test(ch)) throw this.fail(`unknown escape \\${ch}`, at);
        return [ch.charCodeAt(0), ch.charCodeAt(0)];
    }
  }
}

const K_SET = 0;
const K_SPLIT = 1;
const K_BOL = 2;
const K_EOL = 3;
const K_MATCH = 4;

class Nfa {
  readonly kind: number[] = [];
  readonly out1: number[] = [];
  readonly out2: number[] = [];
  readonly sets: (Ranges | null)[] = [];

  add(kind: number, out1: number, out2 = -1, set: Ranges | null = null): number {
    if (this.kind.length >= MAX_NFA_STATES) {
      throw new RegexSyntaxError(0, 'pattern is too complex (too many repetitions)');
    }
    this.kind.push(kind);
    this.out1.push(out1);
    this.out2.push(out2);
    this.sets.push(set);
    return this.kind.length - 1;
  }

  /** Builds `node` so that it continues to state `next`; returns its entry state. */
  build(node: RNode, next: number): number {
    switch (node.t) {
      case 'set':
        return this.add(K_SET, next, -1, node.ranges);
      case 'bol':
        return this.add(K_BOL, next);
      case 'eol':
        return this.add(K_EOL, next);
      case 'seq': {
        let entry = next;
        for (let i = node.items.length - 1; i >= 0; i--) entry = this.build(node.items[i]!, entry);
        return entry;
      }
      case 'alt': {
        let entry = this.build(node.options[node.options.length - 1]!, next);
        for (let i = node.options.length - 2; i >= 0; i--) {
          entry = this.add(K_SPLIT, this.build(node.options[i]!, next), entry);
        }
        return entry;
      }
      case 'repeat': {
        let entry = next;
        if (node.max === Number.POSITIVE_INFINITY) {
          const loop = this.add(K_SPLIT, -1, next);
          this.out1[loop] = this.build(node.node, loop);
          entry = loop;
        } else {
          for (let i = node.min; i < node.max; i++) {
            entry = this.add(K_SPLIT, this.build(node.node, entry), next);
          }
        }
        for (let i = 0; i < node.min; i++) entry = this.build(node.node, entry);
        return entry;
      }
    }
  }
}

function inRanges(ranges: Ranges, code: number): boolean {
  for (let i = 0; i < ranges.length; i += 2) {
    if (code < ranges[i]!) return false;
    if (code <= ranges[i + 1]!) return true;
  }
  return false;
}

interface DState {
  readonly raw: readonly number[];
  readonly consuming: readonly number[];
  readonly acceptMid: boolean;
  acceptEnd: number; // -1 unknown, 0 no, 1 yes
  readonly low: (DState | undefined)[];
  high: Map<number, DState> | null;
}

class LinearMatcher {
  private readonly marks: Uint32Array;
  private generation = 0;
  private cache = new Map<string, DState>();

  constructor(
    private readonly nfa: Nfa,
    private readonly start: number,
  ) {
    this.marks = new Uint32Array(nfa.kind.length);
  }

  private nextGeneration(): number {
    this.generation += 1;
    if (this.generation === 0xffffffff) {
      this.marks.fill(0);
      this.generation = 1;
    }
    return this.generation;
  }

  /** Follows ε-moves from `raw`; returns the consuming states reached and whether MATCH is. */
  private closure(raw: readonly number[], atStart: boolean, atEnd: boolean) {
    const { kind, out1, out2 } = this.nfa;
    const gen = this.nextGeneration();
    const stack = raw.slice();
    const consuming: number[] = [];
    let accept = false;
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (this.marks[s] === gen) continue;
      this.marks[s] = gen;
      switch (kind[s]) {
        case K_SET:
          consuming.push(s);
          break;
        case K_SPLIT:
          stack.push(out2[s]!, out1[s]!);
          break;
        case K_BOL:
          if (atStart) stack.push(out1[s]!);
          break;
        case K_EOL:
          if (atEnd) stack.push(out1[s]!);
          break;
        default:
          accept = true;
      }
    }
    return { consuming, accept };
  }

  private step(consuming: readonly number[], code: number): number[] {
    const { out1, sets } = this.nfa;
    const gen = this.nextGeneration();
    const raw = [this.start];
    this.marks[this.start] = gen;
    for (const s of consuming) {
      if (!inRanges(sets[s]!, code)) continue;
      const target = out1[s]!;
      if (this.marks[target] === gen) continue;
      this.marks[target] = gen;
      raw.push(target);
    }
    return raw.sort((a, b) => a - b);
  }

  private stateFor(raw: readonly number[]): DState {
    const key = raw.join(',');
    let state = this.cache.get(key);
    if (state) return state;
    if (this.cache.size >= MAX_CACHED_DFA_STATES) this.cache = new Map();
    const { consuming, accept } = this.closure(raw, false, false);
    state = { raw, consuming, acceptMid: accept, acceptEnd: -1, low: [], high: null };
    this.cache.set(key, state);
    return state;
  }

  test(input: string): boolean {
    const n = input.length;
    const first = this.closure([this.start], true, n === 0);
    if (first.accept) return true;
    if (n === 0) return false;
    let state = this.stateFor(this.step(first.consuming, input.charCodeAt(0)));
    for (let i = 1; i < n; i++) {
      if (state.acceptMid) return true;
      const code = input.charCodeAt(i);
      let next = code < 256 ? state.low[code] : state.high?.get(code);
      if (next === undefined) {
        next = this.stateFor(this.step(state.consuming, code));
        if (code < 256) state.low[code] = next;
        else {
          state.high ??= new Map();
          if (state.high.size < MAX_HIGH_TRANSITIONS) state.high.set(code, next);
        }
      }
      state = next;
    }
    if (state.acceptEnd < 0) state.acceptEnd = this.closure(state.raw, false, true).accept ? 1 : 0;
    return state.acceptEnd === 1;
  }
}

/** Parses and compiles a `matches` pattern; never throws. */
export function compileSafeRegex(pattern: string): RegexCompileResult {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return {
      ok: false,
      error: {
        offset: MAX_PATTERN_LENGTH,
        message: `pattern is longer than ${MAX_PATTERN_LENGTH} characters`,
      },
    };
  }
  try {
    const ast = new PatternParser(pattern).parse();
    const nfa = new Nfa();
    const match = nfa.add(K_MATCH, -1);
    const start = nfa.build(ast, match);
    const matcher = new LinearMatcher(nfa, start);
    return { ok: true, test: (input) => matcher.test(input) };
  } catch (error) {
    if (error instanceof RegexSyntaxError) {
      return { ok: false, error: { offset: error.offset, message: error.message } };
    }
    throw error;
  }
}
