// Text that PostgreSQL stores exactly. `text` and `jsonb` cannot hold NUL (U+0000), and an
// unpaired UTF-16 surrogate is either refused (jsonb) or replaced on the way to UTF-8 (text),
// so a string holding one would fail its insert or come back different from what was hashed.
//
// The encoding is lossless, visible and reversible: NUL and each unpaired surrogate become
// `\u{<hex>}` (lowercase hex of the code unit, e.g. `\u{0}`, `\u{d800}`), and a literal `\u{`
// already in the text becomes `\u{5c}u{` so that every `\u{` of an encoded string starts an
// escape. Text without NUL, unpaired surrogates or `\u{` — nearly all text — is left as it is.
// decodeStorableText gives back the original. Encoding is not idempotent: encode once, at the
// edge where untrusted text is about to be stored.
const ESCAPE_NEEDED =
  /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\\u\{/;
const ESCAPE_NEEDED_ALL = new RegExp(ESCAPE_NEEDED.source, 'g');
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ESCAPE = /\\u\{([0-9a-f]{1,4})\}/g;
const MAX_DEPTH = 256;

/** True when PostgreSQL text and jsonb store `text` exactly (no NUL, no unpaired surrogate). */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** `text` in the storable encoding (see the module comment); the same string when unchanged. */
export function encodeStorableText(text: string): string {
  if (!ESCAPE_NEEDED.test(text)) return text;
  return text.replace(ESCAPE_NEEDED_ALL, (match) =>
    match === '\\u{' ? '\\u{5c}u{' : `\\u{${match.charCodeAt(0).toString(16)}}`,
  );
}

/** The original of an encodeStorableText result. */
export function decodeStorableText(text: string): string {
  if (!text.includes('\\u{')) return text;
  return text.replace(ESCAPE, (_match, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/**
 * A JSON value with every string and object key encoded; the same value (not a copy) when
 * nothing needed encoding. Values nested deeper than 256 levels are returned as they are.
 */
export function encodeStorableJson<T>(value: T): T {
  return encodeJson(value, 0) as T;
}

function encodeJson(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return encodeStorableText(value);
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const encoded = encodeJson(item, depth + 1);
      if (encoded !== item && copy === null) copy = value.slice(0, i);
      if (copy !== null) copy.push(encoded);
    }
    return copy ?? value;
  }
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | null = null;
  const keys = Object.keys(record);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const item = record[key];
    const encodedKey = encodeStorableText(key);
    const encoded = encodeJson(item, depth + 1);
    if (copy === null && (encodedKey !== key || encoded !== item)) {
      copy = {};
      for (let j = 0; j < i; j++) setOwn(copy, keys[j] as string, record[keys[j] as string]);
    }
    if (copy !== null) setOwn(copy, encodedKey, encoded);
  }
  return copy ?? value;
}

/** An own property even for `__proto__`, which plain assignment would take as the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
