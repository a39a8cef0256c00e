import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSafeRegex, MAX_PATTERN_LENGTH } from '../../../shared/npl/condition/regex.js';
import { propertyRuns } from '../../support/property-runs.js';

function matcher(pattern: string): (input: string) => boolean {
  const compiled = compileSafeRegex(pattern);
  if (!compiled.ok) throw new Error(`${pattern}: ${compiled.error.message}`);
  return compiled.test;
}

function rejection(pattern: string): string {
  const compiled = compileSafeRegex(pattern);
  if (compiled.ok) throw new Error(`${pattern} was accepted`);
  return compiled.error.message;
}

describe('the matches regex subset', () => {
  it('rejects backreferences, lookaround, word boundaries and named groups', () => {
    expect(rejection('(a)\\1')).toMatch(/backreference/);
    expect(rejection('(?<x>a)\\k<x>')).toMatch(/named groups|backreference/);
    expect(rejection('a(?=b)')).toMatch(/lookaround/);
    expect(rejection('a(?!b)')).toMatch(/lookaround/);
    expect(rejection('(?<=a)b')).toMatch(/lookaround/);
    expect(rejection('(?<!a)b')).toMatch(/lookaround/);
    expect(rejection('\\bword\\b')).toMatch(/word boundaries/);
  });

  it(`rejects patterns longer than ${MAX_PATTERN_LENGTH} characters and huge repetitions`, () => {
    expect(rejection('a'.repeat(MAX_PATTERN_LENGTH + 1))).toMatch(/longer than/);
    expect(rejection('a{1000}')).toMatch(/limited/);
    expect(rejection('((a{100}){100}){100}')).toMatch(/too complex/);
  });

  it('rejects malformed patterns', () => {
    for (const p of ['(a', 'a)', '[a-', '*a', 'a**', '\\', 'a{2,1}', '[z-a]', '{', '\\q']) {
      expect(() => rejection(p)).not.toThrow();
    }
  });

  it('accepts (a+)+$ and runs it in linear time on the classic catastrophic input', () => {
    const test = matcher('^(a+)+$');
    const input = `${'a'.repeat(200_000)}!`;
    const start = performance.now();
    expect(test(input)).toBe(false);
    expect(test('a'.repeat(200_000))).toBe(true);
    // Backtracking would take longer than the universe's age; linear takes milliseconds.
    expect(performance.now() - start).toBeLessThan(10_000);
  });

  it('keeps linear time on other pathological shapes', () => {
    const input = 'a'.repeat(100_000);
    for (const p of ['(a|a)*b', '(a*)*b', '(a|aa)+$x', '(.*a){20}b', 'a*a*a*a*a*a*b']) {
      const start = performance.now();
      expect(matcher(p)(input)).toBe(false);
      expect(performance.now() - start).toBeLessThan(10_000);
    }
  });

  it('means what JavaScript RegExp means on accepted patterns', () => {
    const patterns = [
      '^ab*c$',
      'a|b',
      '(ab|cd)+',
      '[^a-c]x',
      '\\d{2,3}',
      '^$',
      'x?y??z',
      '[\\w.-]+@[\\w-]+\\.com',
      '(a|b)*abb',
      '^\\s*$',
      '.',
      'a{0}',
      '[]',
      '[^]',
      'a(b|)c',
      '\\x41\\u0042',
      '^a|b$',
      '(?:ab){2,}',
    ];
    const inputs = fc.stringMatching(/^[abcxyz.@ \n01-]{0,12}$/);
    for (const p of patterns) {
      const ours = matcher(p);
      const js = new RegExp(p);
      fc.assert(
        fc.property(inputs, (s) => ours(s) === js.test(s)),
        { numRuns: propertyRuns(300) },
      );
    }
  });
});
