// Condition text → AST, plus the static checks. Never throws on any input: every problem comes
// back as an issue with its offset. The lexical rules follow the reference evaluator where it
// accepts a condition (strings have no escapes, either quote works, `in` is a keyword); see
// docs/npl.md for the grammar.
import type { NplIssue, NplIssueCode } from '../errors.js';
import {
  type CallNode,
  type ListNode,
  NPL_CONTEXT_ROOTS,
  NPL_METHODS,
  type NplCompareOp,
  type NplConditionAst,
  type NplExpr,
  type PathNode,
} from './ast.js';
import { compileSafeRegex } from './regex.js';

export const MAX_CONDITION_LENGTH = 100_000;
export const MAX_NESTING = 64;

type TokenKind = 'ident' | 'string' | 'number' | 'punct' | 'eof';

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly start: number;
  readonly value: string | number;
}

export interface ConditionProblem {
  readonly code: NplIssueCode;
  readonly offset: number;
  readonly message: string;
  readonly hint?: string;
}

/** Problems are errors; warnings (code `always_false`) never make a condition invalid. */
export type ConditionParseResult =
  | {
      readonly ok: true;
      readonly ast: NplConditionAst;
      readonly warnings: readonly ConditionProblem[];
    }
  | {
      readonly ok: false;
      readonly problems: readonly ConditionProblem[];
      readonly warnings: readonly ConditionProblem[];
    };

/** What the static checks found: errors and warnings. */
interface Findings {
  readonly problems: ConditionProblem[];
  readonly warnings: ConditionProblem[];
}

class ConditionSyntaxError extends Error {
  constructor(readonly problem: ConditionProblem) {
    super(problem.message);
  }
}

const PUNCTUATION2 = new Set(['==', '!=', '<=', '>=', '&&', '||']);
const PUNCTUATION1 = new Set(['(', ')', '[', ']', ',', '.', '<', '>', '!']);
const COMPARE_OPS = new Set<string>(['==', '!=', '<', '<=', '>', '>=']);
const KNOWN_ROOTS = new Set<string>(NPL_CONTEXT_ROOTS);
const KNOWN_METHODS = new Set<string>(NPL_METHODS);

function isIdentStart(ch: string | undefined): boolean {
  return ch !== undefined && /[A-Za-z_]/.test(ch);
}
function isDigit(ch: string | undefined): boolean {
  return ch !== undefined && ch >= '0' && ch <= '9';
}

function syntaxError(offset: number, message: string, hint?: string): ConditionSyntaxError {
  return new ConditionSyntaxError({ code: 'condition_syntax', offset, message, hint });
}

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i]!;
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    const start = i;
    if (ch === "'" || ch === '"') {
      const end = src.indexOf(ch, i + 1);
      if (end < 0) {
        throw syntaxError(
          start,
          'unterminated string',
          `close it with ${ch}; strings have no escapes, use the other quote inside`,
        );
      }
      const value = src.slice(i + 1, end);
      i = end + 1;
      tokens.push({ kind: 'string', text: src.slice(start, i), start, value });
      continue;
    }
    if (isDigit(ch) || (ch === '-' && isDigit(src[i + 1]))) {
      i += 1;
      while (isDigit(src[i])) i += 1;
      if (src[i] === '.' && !isIdentStart(src[i + 1])) {
        i += 1;
        while (isDigit(src[i])) i += 1;
      }
      if ((src[i] === 'e' || src[i] === 'E') && /^[eE][+-]?\d/.test(src.slice(i, i + 3))) {
        i += src[i + 1] === '+' || src[i + 1] === '-' ? 2 : 1;
        while (isDigit(src[i])) i += 1;
      }
      const text = src.slice(start, i);
      const value = Number(text);
      if (!Number.isFinite(value)) throw syntaxError(start, `number ${text} is out of range`);
      tokens.push({ kind: 'number', text, start, value });
      continue;
    }
    if (isIdentStart(ch)) {
      i += 1;
      while (i < src.length && /[A-Za-z0-9_]/.test(src[i]!)) i += 1;
      const text = src.slice(start, i);
      tokens.push({ kind: 'ident', text, start, value: text });
      continue;
    }
    const two = src.slice(i, i + 2);
    if (PUNCTUATION2.has(two)) {
      i += 2;
      tokens.push({ kind: 'punct', text: two, start, value: two });
      continue;
    }
    if (PUNCTUATION1.has(ch)) {
      i += 1;
      tokens.push({ kind: 'punct', text: ch, start, value: ch });
      continue;
    }
    const hint =
      ch === '='
        ? 'use == for equality'
        : ch === '&'
          ? 'use &&'
          : ch === '|'
            ? 'use ||'
            : undefined;
    throw syntaxError(start, `unexpected character ${JSON.stringify(ch)}`, hint);
  }
  tokens.push({ kind: 'eof', text: '', start: src.length, value: '' });
  return tokens;
}

class Parser {
  private pos = 0;
  private depth = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  private peek(): Token {
    return this.tokens[this.pos]!;
  }

  private next(): Token {
    const token = this.tokens[this.pos]!;
    if (token.kind !== 'eof') this.pos += 1;
    return token;
  }

  private isPunct(text: string): boolean {
    const token = this.peek();
    return token.kind === 'punct' && token.text === text;
  }

  private expect(text: string, what: string): Token {
    if (!this.isPunct(text)) throw this.unexpected(`expected ${what}`);
    return this.next();
  }

  private unexpected(expected: string): ConditionSyntaxError {
    const token = this.peek();
    const found = token.kind === 'eof' ? 'end of condition' : `'${token.text}'`;
    return syntaxError(token.start, `${expected}, found ${found}`);
  }

  private enter(offset: number): void {
    this.depth += 1;
    if (this.depth > MAX_NESTING) {
      throw new ConditionSyntaxError({
        code: 'limit_exceeded',
        offset,
        message: `condition is nested more than ${MAX_NESTING} levels deep`,
      });
    }
  }

  parseCondition(): NplExpr {
    const expr = this.parseOr();
    if (this.peek().kind !== 'eof') {
      const token = this.peek();
      const hint = COMPARE_OPS.has(token.text)
        ? 'comparisons do not chain; join them with && or ||'
        : undefined;
      throw syntaxError(token.start, `unexpected '${token.text}' after a complete condition`, hint);
    }
    return expr;
  }

  private parseOr(): NplExpr {
    const first = this.parseAnd();
    if (!this.isPunct('||')) return first;
    const operands = [first];
    while (this.isPunct('||')) {
      this.next();
      operands.push(this.parseAnd());
    }
    return { kind: 'or', operands, pos: first.pos };
  }

  private parseAnd(): NplExpr {
    const first = this.parseComparison();
    if (!this.isPunct('&&')) return first;
    const operands = [first];
    while (this.isPunct('&&')) {
      this.next();
      operands.push(this.parseComparison());
    }
    return { kind: 'and', operands, pos: first.pos };
  }

  private parseComparison(): NplExpr {
    const left = this.parseUnary();
    const token = this.peek();
    if (token.kind === 'ident' && token.text === 'in') {
      this.next();
      if (!this.isPunct('[')) throw this.unexpected(`expected '[' after 'in'`);
      return { kind: 'in', left, list: this.parseList(), pos: left.pos };
    }
    if (token.kind === 'punct' && COMPARE_OPS.has(token.text)) {
      this.next();
      const right = this.parseUnary();
      return { kind: 'compare', op: token.text as NplCompareOp, left, right, pos: left.pos };
    }
    return left;
  }

  private parseUnary(): NplExpr {
    if (this.isPunct('!')) {
      const bang = this.next();
      this.enter(bang.start);
      const expr = this.parseUnary();
      this.depth -= 1;
      return { kind: 'not', expr, pos: bang.start };
    }
    return this.parsePrimary();
  }

  private parseList(): ListNode {
    const open = this.next();
    this.enter(open.start);
    const items: NplExpr[] = [];
    while (!this.isPunct(']')) {
      items.push(this.parseUnary());
      if (this.isPunct(',')) this.next();
      else if (!this.isPunct(']')) throw this.unexpected(`expected ',' or ']' in list`);
    }
    this.next();
    this.depth -= 1;
    return { kind: 'list', items, pos: open.start };
  }

  private parsePrimary(): NplExpr {
    const token = this.peek();
    switch (token.kind) {
      case 'string':
      case 'number':
        this.next();
        return { kind: 'literal', value: token.value, pos: token.start };
      case 'ident':
        return this.parseIdentifier();
      case 'punct':
        if (token.text === '[') return this.parseList();
        if (token.text === '(') {
          this.next();
          this.enter(token.start);
          const expr = this.parseOr();
          this.expect(')', `')' to close the '(' at offset ${token.start}`);
          this.depth -= 1;
          return { kind: 'group', expr, pos: token.start };
        }
        throw this.unexpected('expected a value, a path or (');
      default:
        throw this.unexpected('expected a value, a path or (');
    }
  }

  private parseIdentifier(): NplExpr {
    const token = this.next();
    switch (token.text) {
      case 'true':
        return { kind: 'literal', value: true, pos: token.start };
      case 'false':
        return { kind: 'literal', value: false, pos: token.start };
      case 'null':
        return { kind: 'literal', value: null, pos: token.start };
      case 'in':
        throw syntaxError(token.start, `'in' needs a value on its left`);
    }
    const segments: string[] = [];
    const segmentStarts: number[] = [];
    while (this.isPunct('.')) {
      this.next();
      const segment = this.next();
      if (segment.kind === 'ident') {
        segments.push(segment.text);
        segmentStarts.push(segment.start);
      } else if (segment.kind === 'number' && /^\d+(\.\d+)?$/.test(segment.text)) {
        for (const part of segment.text.split('.')) {
          segments.push(part);
          segmentStarts.push(segment.start);
        }
      } else {
        this.pos -= segment.kind === 'eof' ? 0 : 1;
        throw this.unexpected(`expected a field name after '.'`);
      }
    }
    if (this.isPunct('(')) {
      const method = segments.pop();
      const methodStart = segmentStarts.pop();
      if (method === undefined || methodStart === undefined) {
        throw syntaxError(
          this.peek().start,
          `'${token.text}' is not callable`,
          "methods are called on a path, e.g. tool.name.startsWith('db_')",
        );
      }
      const open = this.next();
      this.enter(open.start);
      const arg = this.parseUnary();
      this.expect(')', `')' after the argument of ${method}`);
      this.depth -= 1;
      const target: PathNode = { kind: 'path', root: token.text, segments, pos: token.start };
      const call: CallNode = { kind: 'call', target, method, arg, pos: methodStart };
      return call;
    }
    return { kind: 'path', root: token.text, segments, pos: token.start };
  }
}

function suggestion(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    if (c === lower || c.startsWith(lower) || lower.startsWith(c)) return candidate;
  }
  return undefined;
}

/** Static checks on a parsed condition; appends to `found`. */
function checkExpr(expr: NplExpr, found: Findings, listAllowed = false): void {
  switch (expr.kind) {
    case 'literal':
      return;
    case 'path':
      if (!KNOWN_ROOTS.has(expr.root)) {
        const near = suggestion(expr.root, NPL_CONTEXT_ROOTS);
        found.problems.push({
          code: 'unknown_identifier',
          offset: expr.pos,
          message: `unknown identifier '${expr.root}'`,
          hint: `${near ? `did you mean '${near}'? ` : ''}paths start with one of: ${NPL_CONTEXT_ROOTS.join(', ')}`,
        });
      }
      return;
    case 'list':
      if (!listAllowed) {
        found.problems.push({
          code: 'invalid_operand',
          offset: expr.pos,
          message: 'a list can only appear after in',
          hint: "write value in ['a', 'b']",
        });
      }
      for (const item of expr.items) checkExpr(item, found);
      return;
    case 'group':
    case 'not':
      checkExpr(expr.expr, found);
      return;
    case 'and':
    case 'or':
      for (const operand of expr.operands) checkExpr(operand, found);
      return;
    case 'compare':
      checkExpr(expr.left, found);
      checkExpr(expr.right, found);
      // The reference evaluator accepts these and evaluates them to false (NaN compares false),
      // so a policy valid there must publish here: a warning, not an error.
      if (expr.op !== '==' && expr.op !== '!=') {
        for (const side of [expr.left, expr.right]) {
          if (
            side.kind === 'literal' &&
            typeof side.value === 'string' &&
            Number.isNaN(Number(side.value))
          ) {
            found.warnings.push({
              code: 'always_false',
              offset: side.pos,
              message: `${expr.op} compares numbers, and '${side.value}' is not a number: always false`,
              hint: 'use == or a string method for text',
            });
          }
        }
      }
      return;
    case 'in':
      checkExpr(expr.left, found);
      checkExpr(expr.list, found, true);
      return;
    case 'call':
      checkExpr(expr.target, found);
      checkExpr(expr.arg, found);
      checkCall(expr, found.problems);
      return;
  }
}

function checkCall(call: CallNode, problems: ConditionProblem[]): void {
  if (!KNOWN_METHODS.has(call.method)) {
    const near = suggestion(call.method, NPL_METHODS);
    problems.push({
      code: 'unknown_method',
      offset: call.pos,
      message: `unknown method '${call.method}'`,
      hint: `${near ? `did you mean '${near}'? ` : ''}methods: ${NPL_METHODS.join(', ')}`,
    });
    return;
  }
  if (call.method === 'contains') return;
  const arg = call.arg;
  if (arg.kind !== 'literal' || typeof arg.value !== 'string') {
    problems.push({
      code: 'invalid_operand',
      offset: arg.pos,
      message: `${call.method} takes a string literal`,
    });
    return;
  }
  if (call.method === 'matches') {
    const compiled = compileSafeRegex(arg.value);
    if (!compiled.ok) {
      problems.push({
        code: 'invalid_regex',
        offset: arg.pos + 1 + Math.min(compiled.error.offset, arg.value.length),
        message: `invalid pattern: ${compiled.error.message}`,
        hint: 'matches accepts a linear-time subset of regular expressions (see docs/npl.md)',
      });
    }
  }
}

/**
 * Parses and statically checks a condition. Blank conditions parse to `empty` (always false).
 * Warnings come back on both outcomes.
 */
export function parseCondition(src: string): ConditionParseResult {
  if (typeof src !== 'string') {
    return {
      ok: false,
      problems: [{ code: 'invalid_operand', offset: 0, message: 'a condition must be a string' }],
      warnings: [],
    };
  }
  if (src.length > MAX_CONDITION_LENGTH) {
    return {
      ok: false,
      problems: [
        {
          code: 'limit_exceeded',
          offset: MAX_CONDITION_LENGTH,
          message: `condition is longer than ${MAX_CONDITION_LENGTH} characters`,
        },
      ],
      warnings: [],
    };
  }
  if (src.trim() === '') return { ok: true, ast: { kind: 'empty', pos: 0 }, warnings: [] };
  let ast: NplExpr;
  try {
    ast = new Parser(tokenize(src)).parseCondition();
  } catch (error) {
    if (error instanceof ConditionSyntaxError) {
      return { ok: false, problems: [error.problem], warnings: [] };
    }
    if (error instanceof RangeError) {
      return {
        ok: false,
        problems: [{ code: 'limit_exceeded', offset: 0, message: 'condition is too complex' }],
        warnings: [],
      };
    }
    throw error;
  }
  const found: Findings = { problems: [], warnings: [] };
  checkExpr(ast, found);
  const { problems, warnings } = found;
  return problems.length > 0 ? { ok: false, problems, warnings } : { ok: true, ast, warnings };
}

/** Turns a problem into an issue with 1-based line/column and a caret excerpt. */
export function toConditionIssue(
  src: string,
  problem: ConditionProblem,
  extra: { path?: readonly (string | number)[]; ruleIndex?: number } = {},
): NplIssue {
  const offset = Math.max(0, Math.min(problem.offset, src.length));
  const before = src.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = offset - lineStart + 1;
  let lineEnd = src.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = src.length;
  const excerptStart = Math.max(lineStart, offset - 60);
  const excerptEnd = Math.min(lineEnd, offset + 60);
  const excerpt = `${src.slice(excerptStart, excerptEnd)}\n${' '.repeat(offset - excerptStart)}^`;
  return {
    code: problem.code,
    message: problem.message,
    path: extra.path ?? [],
    ...(problem.hint === undefined ? {} : { hint: problem.hint }),
    ...(extra.ruleIndex === undefined ? {} : { ruleIndex: extra.ruleIndex }),
    line,
    column,
    excerpt,
  };
}
