// SQL in arguments: a tokenizer and two classifiers (destructive statements, bulk reads).
// Pure module: no I/O, no framework imports.
//
// Hand-written on purpose. A general SQL parser throws on the first token it does not expect,
// and tool arguments are prose mixed with SQL, fragments, several dialects and hostile input; a
// parse error would either hide the statement or block every call, and a full parse does not fit
// the per-call budget of microseconds. This analyzer classifies partial, mixed and hostile input
// in bounded time and never throws. Real parsers serve as oracles in the property tests
// (tests/data-plane/inspection/sql-oracle.test.ts). The keyword tables are in sql-keywords.ts.
//
// The tokenizer knows what hides keywords: '…' strings ('' escapes; backslash escapes in a second
// pass, see below), "…" and `…` quoted identifiers, -- and /* */ comments, $tag$…$tag$ dollar
// quoting. It records paren depth per token, so "top level" means "not inside a subquery". It is a
// single forward pass (indexOf for long bodies), linear in the input; unterminated strings and
// comments run to the end of the input.
//
// Dialects disagree on three points that could hide a statement: backslash escapes in strings
// (MySQL), nested block comments (PostgreSQL) and [bracketed] names (T-SQL; elsewhere `[` opens
// an array or subscript, as in ARRAY[']'], where a bracketed-name reading would swallow a quote).
// When the input contains one of them, it is analysed again under that reading, and a finding
// under any reading counts.
//
// A statement is classified only where a statement can begin: at the start of the input, after
// `;`, `(`, `)`, or after EXPLAIN/ANALYZE/BEGIN/THEN/ELSE/… — so `please drop me a line` and
// `remember to delete from the list` are prose, not SQL. The heads are checked strictly (DROP
// needs an object type, UPDATE needs `SET col =`, DELETE/TRUNCATE need a table name followed by
// something SQL can follow it with) to keep prose out. See docs/inspection-detectors.md.

import {
  ALTER_DROP_TARGETS,
  ALTER_OBJECTS,
  CLAUSE_AFTER_WHERE,
  DELETE_CONTINUATIONS,
  DROP_MODIFIERS,
  DROP_OBJECTS,
  HARMLESS_ALTER_DROP,
  RESERVED,
  STATEMENT_PREFIXES,
  STATEMENT_STARTS,
  TRUNCATE_CONTINUATIONS,
  UPDATE_CONTINUATIONS,
} from './sql-keywords.js';
import type { Finding } from './types.js';

const WORD = 1;
const QIDENT = 2;
const STRING = 3;
const DOLLAR = 4;
const NUMBER = 5;
const PUNCT = 6;
const PARAM = 7;

/** How to read the points where dialects disagree; READ_PLAIN is every dialect's common ground. */
const READ_PLAIN = 0;
const READ_BACKSLASH = 1;
const READ_NESTED = 2;
const READ_BRACKETS = 3;

const MAX_KEYWORD = 24;
const MAX_TAG = 64;
/** Dynamic SQL (DO bodies, EXEC strings) is analysed to this nesting. */
const MAX_LEVEL = 3;

export const SQL_LIMIT: Finding = Object.freeze({
  kind: 'inspection-limit',
  detail: 'SQL analysis budget',
});

/** Cheap pre-check: only strings mentioning a destructive verb are tokenized. */
export const SQL_DESTRUCTIVE_HINT = /\b(?:drop|truncate|delete|update|alter)\b/i;
/** Cheap pre-check for the bulk-read classifier. */
export const SQL_BULK_HINT = /\b(?:limit|fetch|top|outfile|dumpfile|copy)\b/i;

function isIdentStart(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 35 || c === 64 || c >= 0x80
  );
}
function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57) || c === 36;
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

class LimitExceeded extends Error {}
const LIMIT_EXCEEDED = new LimitExceeded('SQL analysis budget');

/** Growable token arrays; one per nesting level, reused across calls. */
class SqlTokens {
  count = 0;
  kind = new Uint8Array(64);
  start = new Int32Array(64);
  end = new Int32Array(64);
  depth = new Int32Array(64);
  upper: string[] = [];
  sawBackslash = false;
  sawNestedComment = false;
  sawBracket = false;

  private push(kind: number, start: number, end: number, depth: number): number {
    const t = this.count;
    if (t === this.kind.length) {
      const size = t * 2;
      const kind2 = new Uint8Array(size);
      kind2.set(this.kind);
      this.kind = kind2;
      for (const field of ['start', 'end', 'depth'] as const) {
        const next = new Int32Array(size);
        next.set(this[field]);
        this[field] = next;
      }
    }
    this.kind[t] = kind;
    this.start[t] = start;
    this.end[t] = end;
    this.depth[t] = depth;
    this.upper[t] = '';
    this.count = t + 1;
    return t;
  }

  tokenize(s: string, from: number, to: number, reading: number): void {
    this.count = 0;
    this.sawBackslash = false;
    this.sawNestedComment = false;
    this.sawBracket = false;
    let depth = 0;
    let i = from;
    while (i < to) {
      const c = s.charCodeAt(i);
      if (c <= 32) {
        i++;
      } else if (c === 45 && s.charCodeAt(i + 1) === 45 && i + 1 < to) {
        const nl = s.indexOf('\n', i + 2);
        i = nl < 0 || nl >= to ? to : nl + 1;
      } else if (c === 47 && s.charCodeAt(i + 1) === 42 && i + 1 < to) {
        i = this.skipBlockComment(s, i, to, reading === READ_NESTED);
      } else if (c === 39) {
        const end = this.scanString(s, i, to, reading === READ_BACKSLASH);
        this.push(STRING, i, end, depth);
        i = end;
      } else if (c === 34 || c === 96 || (c === 91 && reading === READ_BRACKETS)) {
        const j = scanQuotedName(s, i, to, c === 91 ? ']' : s[i]!);
        this.push(QIDENT, i, j, depth);
        i = j;
      } else if (c === 36) {
        i = this.scanDollar(s, i, to, depth);
      } else if (isIdentStart(c)) {
        let j = i + 1;
        while (j < to && isIdentPart(s.charCodeAt(j))) j++;
        const t = this.push(WORD, i, j, depth);
        if (j - i <= MAX_KEYWORD) this.upper[t] = s.slice(i, j).toUpperCase();
        i = j;
      } else if (isDigit(c)) {
        let j = i + 1;
        while (j < to) {
          const d = s.charCodeAt(j);
          if (isDigit(d) || d === 46 || (d >= 97 && d <= 122) || (d >= 65 && d <= 90)) j++;
          else break;
        }
        this.push(NUMBER, i, j, depth);
        i = j;
      } else {
        if (c === 40) {
          this.push(PUNCT, i, i + 1, depth);
          depth++;
        } else if (c === 41) {
          depth--;
          this.push(PUNCT, i, i + 1, depth);
        } else {
          if (c === 91) this.sawBracket = true;
          this.push(PUNCT, i, i + 1, depth);
        }
        i++;
      }
    }
  }

  private skipBlockComment(s: string, i: number, to: number, nested: boolean): number {
    if (nested) {
      let level = 1;
      let j = i + 2;
      while (j < to && level > 0) {
        const c = s.charCodeAt(j);
        if (c === 47 && s.charCodeAt(j + 1) === 42) {
          level++;
          j += 2;
        } else if (c === 42 && s.charCodeAt(j + 1) === 47) {
          level--;
          j += 2;
        } else {
          j++;
        }
      }
      return Math.min(j, to);
    }
    const close = s.indexOf('*/', i + 2);
    const end = close < 0 || close + 2 > to ? to : close + 2;
    if (!this.sawNestedComment) {
      const inner = s.indexOf('/*', i + 2);
      if (inner >= 0 && inner < end - 2) this.sawNestedComment = true;
    }
    return end;
  }

  private scanString(s: string, i: number, to: number, backslash: boolean): number {
    let j = i + 1;
    while (j < to) {
      const c = s.charCodeAt(j);
      if (c === 92) {
        this.sawBackslash = true;
        if (backslash) {
          j += 2;
          continue;
        }
      } else if (c === 39) {
        if (s.charCodeAt(j + 1) === 39 && j + 1 < to) {
          j += 2;
          continue;
        }
        return j + 1;
      }
      j++;
    }
    return to;
  }

  private scanDollar(s: string, i: number, to: number, depth: number): number {
    if (isDigit(s.charCodeAt(i + 1))) {
      let j = i + 1;
      while (j < to && isDigit(s.charCodeAt(j))) j++;
      this.push(PARAM, i, j, depth);
      return j;
    }
    let j = i + 1;
    while (j < to && j - i <= MAX_TAG && isIdentPart(s.charCodeAt(j)) && s.charCodeAt(j) !== 36)
      j++;
    if (j < to && s.charCodeAt(j) === 36) {
      const tag = s.slice(i, j + 1);
      const close = s.indexOf(tag, j + 1);
      const end = close < 0 || close + tag.length > to ? to : close + tag.length;
      const t = this.push(DOLLAR, i, end, depth);
      this.upper[t] = tag; // the tag, to find the body: [start + tag.length, end - tag.length)
      return end;
    }
    this.push(PUNCT, i, i + 1, depth);
    return i + 1;
  }
}

/**
 * Finds destructive statements and bulk reads in SQL text. One instance per compiled detector;
 * not re-entrant across detectors but safe for nested analysis (one token buffer per level).
 */
export class SqlAnalyzer {
  private readonly levels: SqlTokens[] = [];
  private s = '';
  private tk: SqlTokens = new SqlTokens();
  private budget = 0;

  /** The first destructive statement in `s` (kind 'sql'), an inspection-limit, or null. */
  destructive(s: string): Finding | null {
    try {
      return this.analyze(s, 0, s.length, 0);
    } catch (error) {
      if (error instanceof LimitExceeded) return SQL_LIMIT;
      throw error;
    } finally {
      this.s = '';
    }
  }

  /**
   * A read above `limit` rows (kind 'bulk-export'): `LIMIT n`/`FETCH FIRST n`/`TOP n` with
   * n > limit, `LIMIT ALL`, `LIMIT -1`, `SELECT … INTO OUTFILE`, `COPY … TO`. Needs a SELECT or
   * COPY where a statement starts; an un-LIMITed SELECT does not fire.
   */
  bulk(s: string, limit: number): Finding | null {
    const tk = this.tokens(0);
    tk.tokenize(s, 0, s.length, READ_PLAIN);
    this.s = s;
    this.tk = tk;
    let found: Finding | null = null;
    let sawSelect = false;
    for (let t = 0; t < tk.count; t++) {
      if (tk.kind[t] !== WORD) continue;
      const word = tk.upper[t];
      if (word === 'SELECT') {
        if (this.atStatementStart(tk, t)) sawSelect = true;
        continue;
      }
      if (found !== null) continue;
      if (word === 'LIMIT') {
        if (isWordTok(tk, t + 1, 'ALL')) found = bulkFinding('SQL LIMIT ALL');
        else if (isPunctTok(s, tk, t + 1, 45) && tk.kind[t + 2] === NUMBER && t + 2 < tk.count)
          found = bulkFinding('SQL LIMIT -1');
        else {
          let n = numberAt(s, tk, t + 1);
          if (n !== null && isPunctTok(s, tk, t + 2, 44)) n = numberAt(s, tk, t + 3);
          if (n !== null && n > limit) found = bulkFinding(`SQL LIMIT ${n} > ${limit}`);
        }
      } else if (word === 'FETCH') {
        const w = tk.upper[t + 1];
        if ((w === 'FIRST' || w === 'NEXT') && t + 1 < tk.count) {
          const n = numberAt(s, tk, t + 2);
          if (n !== null && n > limit) found = bulkFinding(`SQL FETCH FIRST ${n} > ${limit}`);
        }
      } else if (word === 'TOP') {
        const prev = t > 0 && tk.kind[t - 1] === WORD ? tk.upper[t - 1] : '';
        if (prev === 'SELECT' || prev === 'DISTINCT' || prev === 'ALL') {
          const n = numberAt(s, tk, isPunctTok(s, tk, t + 1, 40) ? t + 2 : t + 1);
          if (n !== null && n > limit) found = bulkFinding(`SQL TOP ${n} > ${limit}`);
        }
      } else if (word === 'OUTFILE' || word === 'DUMPFILE') {
        if (isWordTok(tk, t - 1, 'INTO')) found = bulkFinding(`SELECT INTO ${word}`);
      } else if (word === 'COPY' && this.atStatementStart(tk, t)) {
        for (let u = t + 1; u < tk.count; u++) {
          if (isPunctTok(s, tk, u, 59) || tk.depth[u]! < tk.depth[t]!) break;
          if (tk.depth[u] === tk.depth[t] && isWordTok(tk, u, 'TO')) {
            found = bulkFinding('COPY TO');
            sawSelect = true;
            break;
          }
        }
      }
    }
    return sawSelect ? found : null;
  }

  private tokens(level: number): SqlTokens {
    let tk = this.levels[level];
    if (tk === undefined) {
      tk = new SqlTokens();
      this.levels[level] = tk;
    }
    return tk;
  }

  private analyze(s: string, from: number, to: number, level: number): Finding | null {
    if (level > MAX_LEVEL) throw LIMIT_EXCEEDED;
    const tk = this.tokens(level);
    tk.tokenize(s, from, to, READ_PLAIN);
    let found = this.classify(s, tk, level);
    if (found !== null) return found;
    const backslash = tk.sawBackslash;
    const nested = tk.sawNestedComment;
    const brackets = tk.sawBracket;
    if (backslash) {
      tk.tokenize(s, from, to, READ_BACKSLASH);
      found = this.classify(s, tk, level);
      if (found !== null) return found;
    }
    if (nested) {
      tk.tokenize(s, from, to, READ_NESTED);
      found = this.classify(s, tk, level);
      if (found !== null) return found;
    }
    if (brackets) {
      tk.tokenize(s, from, to, READ_BRACKETS);
      found = this.classify(s, tk, level);
    }
    return found;
  }

  private classify(s: string, tk: SqlTokens, level: number): Finding | null {
    this.s = s;
    this.tk = tk;
    this.budget = 4 * tk.count + 1024;
    for (let t = 0; t < tk.count; t++) {
      if (tk.kind[t] !== WORD || !this.atStatementStart(tk, t)) continue;
      let found: Finding | null = null;
      switch (tk.upper[t]) {
        case 'DROP':
          found = this.checkDrop(t);
          break;
        case 'TRUNCATE':
          found = this.checkTruncate(t);
          break;
        case 'ALTER':
          found = this.checkAlter(t);
          break;
        case 'DELETE':
          found = this.checkDelete(t);
          break;
        case 'UPDATE':
          found = this.checkUpdate(t);
          break;
        case 'DO':
        case 'EXEC':
        case 'EXECUTE': {
          const budget = this.budget;
          found = this.checkDynamic(t, level);
          this.s = s;
          this.tk = tk;
          this.budget = budget;
          break;
        }
        default:
          break;
      }
      if (found !== null) return found;
    }
    return null;
  }

  private atStatementStart(tk: SqlTokens, t: number): boolean {
    if (t === 0) return true;
    const p = t - 1;
    if (tk.kind[p] === PUNCT) {
      const c = this.s.charCodeAt(tk.start[p]!);
      return c === 59 || c === 40 || c === 41;
    }
    return tk.kind[p] === WORD && STATEMENT_PREFIXES.has(tk.upper[p]!);
  }

  private word(t: number): string {
    return t < this.tk.count && this.tk.kind[t] === WORD ? this.tk.upper[t]! : '';
  }

  private punct(t: number, c: number): boolean {
    return isPunctTok(this.s, this.tk, t, c);
  }

  private isName(t: number): boolean {
    if (t >= this.tk.count) return false;
    const kind = this.tk.kind[t];
    if (kind === QIDENT) return true;
    if (kind !== WORD) return false;
    const w = this.tk.upper[t]!;
    return w === '' || !RESERVED.has(w);
  }

  /** Index after a qualified name starting at t, or -1. */
  private readName(t: number): number {
    // Around a dot any word is a name part, reserved or not (`s.order`, `to.a`).
    const qualifier = this.isNamePart(t) && this.punct(t + 1, 46) && this.isNamePart(t + 2);
    if (!qualifier && !this.isName(t)) return -1;
    let u = t + 1;
    while (this.punct(u, 46) && this.isNamePart(u + 1)) u += 2;
    return u;
  }

  private isNamePart(t: number): boolean {
    return t < this.tk.count && (this.tk.kind[t] === WORD || this.tk.kind[t] === QIDENT);
  }

  /** A keyword used as a column or qualifier (`go = 1`, `t.go`, `go.x`) starts no statement. */
  private isColumnWord(t: number): boolean {
    return this.punct(t + 1, 61) || this.punct(t + 1, 46) || (t > 0 && this.punct(t - 1, 46));
  }

  private skipAlias(t: number): number {
    if (this.word(t) === 'AS') return this.isName(t + 1) ? t + 2 : t;
    return this.isName(t) ? t + 1 : t;
  }

  private statementEnd(t: number, base: number): boolean {
    return t >= this.tk.count || this.punct(t, 59) || this.tk.depth[t]! < base;
  }

  /** Index of the statement's top-level token satisfying `pick`, or -1 at the statement end. */
  private findTop(t: number, base: number, wanted: string): number {
    const tk = this.tk;
    for (let u = t; u < tk.count; u++) {
      if (--this.budget < 0) throw LIMIT_EXCEEDED;
      if (this.punct(u, 59) || tk.depth[u]! < base) return -1;
      if (tk.depth[u] !== base || tk.kind[u] !== WORD) continue;
      const w = tk.upper[u]!;
      if (w === wanted) return u;
      if (STATEMENT_STARTS.has(w) && !this.isColumnWord(u)) return -1;
    }
    return -1;
  }

  private skipTop(t: number): number {
    if (this.word(t) !== 'TOP') return t;
    let u = t + 1;
    if (this.punct(u, 40)) {
      const base = this.tk.depth[u]!;
      u++;
      while (u < this.tk.count && !(this.punct(u, 41) && this.tk.depth[u] === base)) u++;
      u++;
    } else if (this.tk.kind[u] === NUMBER) {
      u++;
    }
    return this.word(u) === 'PERCENT' ? u + 1 : u;
  }

  private checkDrop(t: number): Finding | null {
    let u = t + 1;
    let detail = 'DROP';
    while (DROP_MODIFIERS.has(this.word(u))) {
      if (this.word(u) === 'MATERIALIZED' || this.word(u) === 'FOREIGN')
        detail += ` ${this.word(u)}`;
      u++;
    }
    const object = this.word(u);
    if (!DROP_OBJECTS.has(object)) return null;
    if (u + 1 >= this.tk.count || this.punct(u + 1, 59)) return null; // "drop table" with no name
    return sqlFinding(`${detail} ${object}`);
  }

  private checkTruncate(t: number): Finding | null {
    const base = this.tk.depth[t]!;
    let u = t + 1;
    if (this.word(u) === 'TABLE') u++;
    if (this.word(u) === 'ONLY') u++;
    const n = this.readName(u);
    if (n < 0) return null;
    u = n;
    if (this.punct(u, 42)) u++;
    if (this.statementEnd(u, base) || this.punct(u, 44) || TRUNCATE_CONTINUATIONS.has(this.word(u)))
      return sqlFinding('TRUNCATE');
    return null;
  }

  private checkAlter(t: number): Finding | null {
    const base = this.tk.depth[t]!;
    let u = t + 1;
    if (!ALTER_OBJECTS.has(this.word(u))) return null;
    const object = this.word(u) === 'ONLINE' || this.word(u) === 'IGNORE' ? 'TABLE' : this.word(u);
    for (u++; u < this.tk.count; u++) {
      if (--this.budget < 0) throw LIMIT_EXCEEDED;
      if (this.statementEnd(u, base)) return null;
      if (this.tk.depth[u] !== base) continue;
      const w = this.word(u);
      if (w === 'TRUNCATE') return sqlFinding(`ALTER ${object} … TRUNCATE`);
      if (w !== 'DROP') continue;
      const next = this.word(u + 1);
      if (HARMLESS_ALTER_DROP.has(next)) continue;
      const target = ALTER_DROP_TARGETS.has(next) ? next : 'COLUMN';
      return sqlFinding(`ALTER ${object} … DROP ${target}`);
    }
    return null;
  }

  private checkDelete(t: number): Finding | null {
    const base = this.tk.depth[t]!;
    let u = t + 1;
    while (this.word(u) === 'LOW_PRIORITY' || this.word(u) === 'QUICK' || this.word(u) === 'IGNORE')
      u++;
    u = this.skipTop(u);
    if (this.word(u) === 'FROM') u++;
    if (this.word(u) === 'ONLY') u++;
    const n = this.readName(u);
    if (n < 0) return null;
    u = n;
    if (this.punct(u, 42)) u++;
    u = this.skipAlias(u);
    if (
      !this.statementEnd(u, base) &&
      !this.punct(u, 44) &&
      !DELETE_CONTINUATIONS.has(this.word(u))
    )
      return null;
    return this.checkWhere(u, base, 'DELETE');
  }

  private checkUpdate(t: number): Finding | null {
    const base = this.tk.depth[t]!;
    let u = t + 1;
    while (this.word(u) === 'LOW_PRIORITY' || this.word(u) === 'IGNORE' || this.word(u) === 'ONLY')
      u++;
    if (this.word(u) === 'OR') u += 2;
    u = this.skipTop(u);
    const n = this.readName(u);
    if (n < 0) return null;
    u = n;
    if (this.punct(u, 42)) u++;
    u = this.skipAlias(u);
    let set = -1;
    if (this.word(u) === 'SET') set = u;
    else if (this.punct(u, 44) || UPDATE_CONTINUATIONS.has(this.word(u)))
      set = this.findTop(u, base, 'SET');
    if (set < 0) return null;
    // SET must start an assignment: col = …, t.col = …, or (a, b) = …
    let a = set + 1;
    if (!this.punct(a, 40)) {
      // Right after SET, any word followed by `=` is the column, reserved or not (MySQL accepts
      // `SET On = …`): reading it as a keyword would let an unbounded UPDATE through.
      const end = this.isNamePart(a) && this.punct(a + 1, 61) ? a + 1 : this.readName(a);
      if (end < 0 || !this.punct(end, 61)) return null;
      a = end;
    }
    return this.checkWhere(a, base, 'UPDATE');
  }

  /** DELETE/UPDATE whose statement has no top-level WHERE, or only an always-true one. */
  private checkWhere(from: number, base: number, verb: string): Finding | null {
    const where = this.findTop(from, base, 'WHERE');
    if (where < 0) return sqlFinding(`${verb} without WHERE`);
    // WHERE TRUE, WHERE 1, WHERE 1 = 1, … OR 'a' = 'a': every row.
    let u = where;
    for (;;) {
      if (this.tautologyEnds(u + 1, base)) return sqlFinding(`${verb} with an always-true WHERE`);
      u = this.findTopOr(u + 1, base);
      if (u < 0) return null;
    }
  }

  private findTopOr(t: number, base: number): number {
    const tk = this.tk;
    for (let u = t; u < tk.count; u++) {
      if (--this.budget < 0) throw LIMIT_EXCEEDED;
      if (this.statementEnd(u, base)) return -1;
      if (tk.depth[u] === base && this.word(u) === 'OR') return u;
    }
    return -1;
  }

  private tautologyEnds(t: number, base: number): boolean {
    const tk = this.tk;
    let u = t;
    if (this.word(u) === 'TRUE') u++;
    else if (tk.kind[u] === NUMBER && u < tk.count) {
      const a = this.s.slice(tk.start[u]!, tk.end[u]!);
      if (this.punct(u + 1, 61)) {
        const kind = tk.kind[u + 2];
        if (kind !== NUMBER || this.s.slice(tk.start[u + 2]!, tk.end[u + 2]!) !== a) return false;
        u += 3;
      } else {
        if (Number(a) === 0) return false;
        u++;
      }
    } else if (tk.kind[u] === STRING && u < tk.count && this.punct(u + 1, 61)) {
      if (tk.kind[u + 2] !== STRING) return false;
      const a = this.s.slice(tk.start[u]!, tk.end[u]!);
      if (this.s.slice(tk.start[u + 2]!, tk.end[u + 2]!) !== a) return false;
      u += 3;
    } else {
      return false;
    }
    return this.statementEnd(u, base) || CLAUSE_AFTER_WHERE.has(this.word(u));
  }

  /** DO $$…$$, DO '…', EXEC('…'), EXECUTE IMMEDIATE '…': the body is SQL that runs now. */
  private checkDynamic(t: number, level: number): Finding | null {
    const tk = this.tk;
    let u = t + 1;
    if (tk.upper[t] === 'DO') {
      if (this.word(u) === 'LANGUAGE') u += 2;
    } else {
      if (this.word(u) === 'IMMEDIATE') u++;
      if (this.punct(u, 40)) u++;
      if ((this.word(u) === 'N' || this.word(u) === 'E') && tk.kind[u + 1] === STRING) u++;
    }
    if (u >= tk.count) return null;
    const s = this.s;
    if (tk.kind[u] === STRING) {
      return this.analyze(s, tk.start[u]! + 1, tk.end[u]! - 1, level + 1);
    }
    if (tk.kind[u] === DOLLAR) {
      const tag = tk.upper[u]!.length;
      const from = tk.start[u]! + tag;
      const to = Math.max(from, tk.end[u]! - tag);
      return this.analyze(s, from, to, level + 1);
    }
    return null;
  }
}

/** End of a quoted name opened at `i` and closed by `close` (doubled: a literal one). */
function scanQuotedName(s: string, i: number, to: number, close: string): number {
  let j = i + 1;
  for (;;) {
    const at = s.indexOf(close, j);
    if (at < 0 || at >= to) return to;
    if (s[at + 1] !== close || at + 1 >= to) return at + 1;
    j = at + 2;
  }
}

function isWordTok(tk: SqlTokens, t: number, word: string): boolean {
  return t >= 0 && t < tk.count && tk.kind[t] === WORD && tk.upper[t] === word;
}

function isPunctTok(s: string, tk: SqlTokens, t: number, c: number): boolean {
  return t < tk.count && tk.kind[t] === PUNCT && s.charCodeAt(tk.start[t]!) === c;
}

function numberAt(s: string, tk: SqlTokens, t: number): number | null {
  if (t >= tk.count || tk.kind[t] !== NUMBER) return null;
  const n = Number(s.slice(tk.start[t]!, tk.end[t]!));
  return Number.isFinite(n) ? n : null;
}

function sqlFinding(detail: string): Finding {
  return { kind: 'sql', detail };
}

function bulkFinding(detail: string): Finding {
  return { kind: 'bulk-export', detail };
}
