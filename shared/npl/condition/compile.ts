// AST → closures. Work that depends only on the condition (path splitting, literal coercion,
// lower-casing a `contains` needle, regex compilation, list Sets) happens here, once; the
// returned closures only read the context. Every closure expects an object context: the public
// entry points replace anything else by an empty object.
import type {
  CallNode,
  CompareNode,
  InNode,
  NplCompareOp,
  NplConditionAst,
  NplExpr,
  PathNode,
} from './ast.js';
import { compileSafeRegex } from './regex.js';
import { readOwn, sameValueZero, toNumber, toText } from './values.js';

export type Ctx = object;
export type Getter = (ctx: Ctx) => unknown;
export type Test = (ctx: Ctx) => boolean;

const hasOwn = Object.prototype.hasOwnProperty;
const arrayIncludes = Array.prototype.includes;
const SET_THRESHOLD = 12;

type Rec = Record<string, unknown>;

function compileWalk(keys: readonly string[]): Getter {
  const [a, b, c] = keys as [string, string | undefined, string | undefined];
  if (keys.length === 1) return (ctx) => (hasOwn.call(ctx, a) ? (ctx as Rec)[a] : undefined);
  if (keys.length === 2 && b !== undefined) {
    return (ctx) => {
      const x = hasOwn.call(ctx, a) ? (ctx as Rec)[a] : undefined;
      if (x === null || typeof x !== 'object') return undefined;
      return hasOwn.call(x, b) ? (x as Rec)[b] : undefined;
    };
  }
  if (keys.length === 3 && b !== undefined && c !== undefined) {
    return (ctx) => {
      const x = hasOwn.call(ctx, a) ? (ctx as Rec)[a] : undefined;
      if (x === null || typeof x !== 'object') return undefined;
      const y = hasOwn.call(x, b) ? (x as Rec)[b] : undefined;
      if (y === null || typeof y !== 'object') return undefined;
      return hasOwn.call(y, c) ? (y as Rec)[c] : undefined;
    };
  }
  return (ctx) => {
    let x: unknown = ctx;
    for (let i = 0; i < keys.length; i++) {
      if (x === null || typeof x !== 'object') return undefined;
      const key = keys[i]!;
      x = hasOwn.call(x, key) ? (x as Rec)[key] : undefined;
    }
    return x;
  };
}

/**
 * Paths read own properties only. Compatibility: like the reference, `args.a.b` that finds
 * nothing falls back to the key `'a.b'` of `args` (and `tool.args.a.b` to `'a.b'` of `tool.args`).
 */
export function compilePath(node: PathNode): Getter {
  const walk = compileWalk([node.root, ...node.segments]);
  const segs = node.segments;
  if (node.root === 'args' && segs.length >= 2) {
    const key = segs.join('.');
    return (ctx) => {
      const value = walk(ctx);
      return value !== undefined ? value : readOwn(readOwn(ctx, 'args'), key);
    };
  }
  if (node.root === 'tool' && segs[0] === 'args' && segs.length >= 3) {
    const key = segs.slice(1).join('.');
    return (ctx) => {
      const value = walk(ctx);
      return value !== undefined ? value : readOwn(readOwn(readOwn(ctx, 'tool'), 'args'), key);
    };
  }
  return walk;
}

function constant(value: unknown): Getter {
  return () => value;
}

function compileValue(node: NplExpr): Getter {
  switch (node.kind) {
    case 'literal':
      return constant(node.value);
    case 'path':
      return compilePath(node);
    case 'list':
      throw new Error('internal: a list is not a value (rejected by the static checks)');
    default:
      return compileTest(node);
  }
}

/**
 * The hot shapes `a.b == literal` and `a.b <op> number` as one closure each (no getter call).
 * Same semantics as compilePath + compare; only two-key paths without fallbacks qualify.
 */
function fusedPathEquals(path: PathNode, lit: unknown): Test | undefined {
  if (path.segments.length !== 1) return undefined;
  const a = path.root;
  const b = path.segments[0]!;
  return (ctx) => {
    const x = hasOwn.call(ctx, a) ? (ctx as Rec)[a] : undefined;
    if (x === null || typeof x !== 'object') return lit === undefined;
    return (hasOwn.call(x, b) ? (x as Rec)[b] : undefined) === lit;
  };
}

function fusedPathOrdering(path: PathNode, op: NplCompareOp, n: number): Test | undefined {
  if (path.segments.length !== 1) return undefined;
  const a = path.root;
  const b = path.segments[0]!;
  const read = (ctx: Ctx): number => {
    const x = hasOwn.call(ctx, a) ? (ctx as Rec)[a] : undefined;
    if (x === null || typeof x !== 'object') return Number.NaN;
    const v = hasOwn.call(x, b) ? (x as Rec)[b] : undefined;
    return typeof v === 'number' ? v : toNumber(v);
  };
  switch (op) {
    case '<':
      return (ctx) => read(ctx) < n;
    case '<=':
      return (ctx) => read(ctx) <= n;
    case '>':
      return (ctx) => read(ctx) > n;
    case '>=':
      return (ctx) => read(ctx) >= n;
    default:
      return undefined;
  }
}

function compileCompare(node: CompareNode): Test {
  const { op, left, right } = node;
  if (op === '==' || op === '!=') {
    const eq = op === '==';
    if (right.kind === 'literal' || left.kind === 'literal') {
      const lit = right.kind === 'literal' ? right.value : (left as { value: unknown }).value;
      const other = right.kind === 'literal' ? left : right;
      const fused = other.kind === 'path' ? fusedPathEquals(other, lit) : undefined;
      if (fused) return eq ? fused : (ctx) => !fused(ctx);
      const get = compileValue(other);
      return eq ? (ctx) => get(ctx) === lit : (ctx) => get(ctx) !== lit;
    }
    const l = compileValue(left);
    const r = compileValue(right);
    return eq ? (ctx) => l(ctx) === r(ctx) : (ctx) => l(ctx) !== r(ctx);
  }
  if (right.kind === 'literal' && left.kind === 'path') {
    const fused = fusedPathOrdering(left, op, toNumber(right.value));
    if (fused) return fused;
  }
  const l = compileNumber(left);
  if (right.kind === 'literal') {
    const n = toNumber(right.value);
    switch (op) {
      case '<':
        return (ctx) => l(ctx) < n;
      case '<=':
        return (ctx) => l(ctx) <= n;
      case '>':
        return (ctx) => l(ctx) > n;
      default:
        return (ctx) => l(ctx) >= n;
    }
  }
  const r = compileNumber(right);
  switch (op) {
    case '<':
      return (ctx) => l(ctx) < r(ctx);
    case '<=':
      return (ctx) => l(ctx) <= r(ctx);
    case '>':
      return (ctx) => l(ctx) > r(ctx);
    default:
      return (ctx) => l(ctx) >= r(ctx);
  }
}

function compileNumber(node: NplExpr): (ctx: Ctx) => number {
  if (node.kind === 'literal') {
    const n = toNumber(node.value);
    return () => n;
  }
  const get = compileValue(node);
  return (ctx) => {
    const value = get(ctx);
    return typeof value === 'number' ? value : toNumber(value);
  };
}

function compileIn(node: InNode): Test {
  const left = compileValue(node.left);
  const items = node.list.items;
  if (items.every((item) => item.kind === 'literal')) {
    const values = items.map((item) => (item as { value: unknown }).value);
    if (values.length >= SET_THRESHOLD) {
      const set = new Set(values);
      return (ctx) => {
        const v = left(ctx);
        if (Array.isArray(v)) {
          for (let i = 0; i < values.length; i++) if (arrayIncludes.call(v, values[i])) return true;
          return false;
        }
        return set.has(v);
      };
    }
    return (ctx) => {
      const v = left(ctx);
      if (Array.isArray(v)) {
        for (let i = 0; i < values.length; i++) if (arrayIncludes.call(v, values[i])) return true;
        return false;
      }
      for (let i = 0; i < values.length; i++) if (sameValueZero(values[i], v)) return true;
      return false;
    };
  }
  const getters = items.map(compileValue);
  return (ctx) => {
    const v = left(ctx);
    const isList = Array.isArray(v);
    for (let i = 0; i < getters.length; i++) {
      const item = getters[i]!(ctx);
      if (isList ? arrayIncludes.call(v, item) : sameValueZero(item, v)) return true;
    }
    return false;
  };
}

function compileCall(node: CallNode): Test {
  const get = compilePath(node.target);
  const arg = node.arg;
  switch (node.method) {
    case 'contains': {
      // Reference semantics: String(value ?? '') lower-cased includes String(arg) lower-cased.
      const haystack = (ctx: Ctx): string => {
        const v = get(ctx);
        return (
          typeof v === 'string' ? v : v === undefined || v === null ? '' : toText(v)
        ).toLowerCase();
      };
      if (arg.kind === 'literal') {
        const needle = toText(arg.value).toLowerCase();
        return (ctx) => haystack(ctx).includes(needle);
      }
      const needleOf = compileValue(arg);
      return (ctx) => haystack(ctx).includes(toText(needleOf(ctx)).toLowerCase());
    }
    case 'startsWith': {
      const prefix = String((arg as { value: unknown }).value);
      return (ctx) => {
        const v = get(ctx);
        return typeof v === 'string' && v.startsWith(prefix);
      };
    }
    case 'endsWith': {
      const suffix = String((arg as { value: unknown }).value);
      return (ctx) => {
        const v = get(ctx);
        return typeof v === 'string' && v.endsWith(suffix);
      };
    }
    case 'matches': {
      const compiled = compileSafeRegex(String((arg as { value: unknown }).value));
      if (!compiled.ok) throw new Error(`internal: ${compiled.error.message}`);
      const test = compiled.test;
      return (ctx) => {
        const v = get(ctx);
        return typeof v === 'string' && test(v);
      };
    }
    default:
      throw new Error(`internal: unknown method ${node.method}`);
  }
}

function compileTest(node: NplExpr): Test {
  switch (node.kind) {
    case 'literal': {
      const value = Boolean(node.value);
      return () => value;
    }
    case 'path': {
      const get = compilePath(node);
      return (ctx) => Boolean(get(ctx));
    }
    case 'list':
      throw new Error('internal: a list is not a condition (rejected by the static checks)');
    case 'group':
      return compileTest(node.expr);
    case 'not': {
      const inner = compileTest(node.expr);
      return (ctx) => !inner(ctx);
    }
    case 'and': {
      const tests = node.operands.map(compileTest);
      if (tests.length === 2) {
        const [a, b] = tests as [Test, Test];
        return (ctx) => a(ctx) && b(ctx);
      }
      return (ctx) => {
        for (let i = 0; i < tests.length; i++) if (!tests[i]!(ctx)) return false;
        return true;
      };
    }
    case 'or': {
      const tests = node.operands.map(compileTest);
      if (tests.length === 2) {
        const [a, b] = tests as [Test, Test];
        return (ctx) => a(ctx) || b(ctx);
      }
      return (ctx) => {
        for (let i = 0; i < tests.length; i++) if (tests[i]!(ctx)) return true;
        return false;
      };
    }
    case 'compare':
      return compileCompare(node);
    case 'in':
      return compileIn(node);
    case 'call':
      return compileCall(node);
  }
}

/** Compiles a checked AST to a predicate over an object context. */
export function compileAst(ast: NplConditionAst): Test {
  if (ast.kind === 'empty') return () => false;
  return compileTest(ast);
}
