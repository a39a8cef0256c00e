// The nesting and size bound of parsed bodies (data-plane/json-bounds.ts): iterative, so a value
// nested 100 000 levels deep (which JSON.parse builds without complaint) is measured, not walked
// into a RangeError.
import { describe, expect, it } from 'vitest';
import { withinJsonBounds } from '../../data-plane/json-bounds.js';

function nested(depth: number, open: string, close: string, leaf = '1'): unknown {
  return JSON.parse(`${open.repeat(depth)}${leaf}${close.repeat(depth)}`);
}

describe('withinJsonBounds', () => {
  it('measures a value 100 000 levels deep without recursion', () => {
    expect(withinJsonBounds(nested(100_000, '[', ']'), 64, 100_000)).toBe(false);
    expect(withinJsonBounds(nested(100_000, '{"a":', '}'), 64, 100_000)).toBe(false);
  });

  it('accepts exactly the bound and refuses one level more', () => {
    expect(withinJsonBounds(nested(64, '[', ']'), 64, 100_000)).toBe(true);
    expect(withinJsonBounds(nested(65, '[', ']'), 64, 100_000)).toBe(false);
    expect(withinJsonBounds('scalar', 0, 0)).toBe(true);
  });

  it('counts containers against the size bound', () => {
    const wide = Array.from({ length: 10 }, () => ({}));
    expect(withinJsonBounds(wide, 64, 11)).toBe(true);
    expect(withinJsonBounds(wide, 64, 10)).toBe(false);
  });
});
