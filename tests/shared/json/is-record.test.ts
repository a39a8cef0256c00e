import { describe, expect, it } from 'vitest';
import { isRecord } from '../../../shared/json/is-record.js';

describe('isRecord', () => {
  it('accepts objects, including ones without a prototype', () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord(Object.create(null))).toBe(true);
  });

  it('refuses null, arrays and scalars', () => {
    for (const value of [null, undefined, [], [1], 'x', 1, true]) {
      expect(isRecord(value)).toBe(false);
    }
  });
});
