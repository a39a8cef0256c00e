// The storable encoding: lossless, visible, and the identity on text PostgreSQL stores as is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeStorableText,
  encodeStorableJson,
  encodeStorableText,
  isStorableText,
} from '../../../shared/text/storable-text.js';
import { propertyRuns } from '../../support/property-runs.js';

describe('storable text', () => {
  it('escapes NUL, unpaired surrogates and a literal \\u{ visibly', () => {
    expect(encodeStorableText('a\u0000b')).toBe('a\\u{0}b');
    expect(encodeStorableText('\ud800x\udfff')).toBe('\\u{d800}x\\u{dfff}');
    expect(encodeStorableText('say \\u{41}')).toBe('say \\u{5c}u{41}');
    expect(encodeStorableText('ok \ud83d\ude00 \\u0000 \\')).toBe('ok \ud83d\ude00 \\u0000 \\');
  });

  it('round-trips any string, and only encoded text is storable', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({
        unit: fc.constantFrom('\u0000', '\ud800', '\udc00', '\\', 'u', '{', '}', '0', 'a'),
      }),
    );
    fc.assert(
      fc.property(text, (original) => {
        const stored = encodeStorableText(original);
        expect(isStorableText(stored)).toBe(true);
        expect(decodeStorableText(stored)).toBe(original);
        if (isStorableText(original) && !original.includes('\\u{')) expect(stored).toBe(original);
      }),
      { numRuns: propertyRuns(2000) },
    );
  });

  it('encodes JSON strings and keys, keeps unchanged values, and never sets a prototype', () => {
    const plain = { a: ['x', 1, { b: null }] };
    expect(encodeStorableJson(plain)).toBe(plain);
    const encoded = encodeStorableJson({ k: 1, ['n\u0000']: ['\udc00'], __proto__x: 2 });
    expect(encoded).toEqual({ k: 1, 'n\\u{0}': ['\\u{dc00}'], __proto__x: 2 });
    const poisoned = JSON.parse('{"__proto__": {"polluted": "\\u0000"}}');
    const safe = encodeStorableJson(poisoned) as Record<string, unknown>;
    expect(Object.getPrototypeOf(safe)).toBe(Object.prototype);
    expect(Object.keys(safe)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
