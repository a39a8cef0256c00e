// Total versions of the JavaScript coercions the reference evaluator relies on (`Number(x)`,
// `String(x)`, property access). They agree with JavaScript on every JSON value and never throw:
// objects are never asked for `valueOf`/`toString`, and only own properties are read.

const hasOwn = Object.prototype.hasOwnProperty;
const MAX_JOIN_DEPTH = 100;

/** `obj[key]` if `obj` is an object or array with that own property, else `undefined`. */
export function readOwn(obj: unknown, key: string): unknown {
  if (obj === null || typeof obj !== 'object') return undefined;
  return hasOwn.call(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

/** `Number(value)` for JSON values; `NaN` for objects (the reference would call their methods). */
export function toNumber(value: unknown): number {
  switch (typeof value) {
    case 'number':
      return value;
    case 'string':
      return Number(value);
    case 'boolean':
      return value ? 1 : 0;
    case 'bigint':
      return Number(value);
    case 'object':
      if (value === null) return 0;
      return Array.isArray(value) ? Number(toText(value)) : Number.NaN;
    default:
      return Number.NaN;
  }
}

/** `String(value)` for JSON values: arrays join like `Array.prototype.join`, objects are `[object Object]`. */
export function toText(value: unknown, depth = 0): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'undefined':
      return 'undefined';
    case 'object': {
      if (value === null) return 'null';
      if (!Array.isArray(value)) return '[object Object]';
      if (depth >= MAX_JOIN_DEPTH) return '';
      let out = '';
      for (let i = 0; i < value.length; i++) {
        if (i > 0) out += ',';
        const item: unknown = value[i];
        if (item !== null && item !== undefined) out += toText(item, depth + 1);
      }
      return out;
    }
    case 'symbol':
      return value.toString();
    default:
      return 'function';
  }
}

/** `Array.prototype.includes` membership (SameValueZero: `===`, except that NaN finds NaN). */
export function sameValueZero(a: unknown, b: unknown): boolean {
  // biome-ignore lint/suspicious/noSelfCompare: NaN test without a call
  return a === b || (a !== a && b !== b);
}
