// Name patterns (shared/tools/name-globs.ts) and the two checks built on them: the data plane's
// allow list (data-plane/store/name-matcher.ts) and the spawn's "child tools within the
// parent's" (toolsBeyond). Properties over small alphabets, so stars, repeated letters, regex
// metacharacters and surrogate pairs meet often; the oracle is the anchored regular expression
// the gateway matched with before (exact, but backtracking, and it threw on a glob with `-`:
// `\-` is no valid escape under the `u` flag; the oracle leaves `-` unescaped).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileAllowList, compileNameMatcher } from '../../../data-plane/store/name-matcher.js';
import {
  compileGlob,
  compileNamePatterns,
  matchGlob,
  toolsBeyond,
} from '../../../shared/tools/name-globs.js';
import { propertyRuns } from '../../support/property-runs.js';

const letter = fc.constantFrom('a', 'b', '_', '.', '-', '\\', '(', '😀');
const name = fc.string({ unit: letter, maxLength: 8 });
const pattern = fc.string({ unit: fc.oneof(letter, fc.constant('*')), maxLength: 6 });
const patterns = fc.array(pattern, { maxLength: 4 });
const fillers = fc.array(name, { minLength: 1, maxLength: 4 });

function oracle(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.includes('*')) return () => true;
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const globs = patterns
    .filter((p) => p.includes('*'))
    .map((glob) =>
      glob
        .split('*')
        .map((part) => part.replace(/[\\^$.|?+()[\]{}/]/g, '\\$&'))
        .join('[^]*'),
    );
  const regex = globs.length === 0 ? undefined : new RegExp(`^(?:${globs.join('|')})$`, 'u');
  return (name) => exact.has(name) || (regex?.test(name) ?? false);
}

/** A name the pattern matches: each star replaced by a filler. */
function instance(pattern: string, with_: readonly string[]): string {
  return pattern
    .split('*')
    .reduce((text, piece, i) => (i === 0 ? piece : text + with_[i % with_.length] + piece), '');
}

describe('name patterns', () => {
  it('match exactly what the anchored regular expression matched', () => {
    // Two letters find the overlaps (a piece found inside the tail); the wide alphabet the escapes.
    const ab = fc.constantFrom('a', 'b');
    const narrow = {
      pattern: fc.string({ unit: fc.constantFrom('a', 'b', '*'), maxLength: 7 }),
      name: fc.string({ unit: ab, maxLength: 8 }),
    };
    for (const arbitraries of [narrow, { pattern, name }]) {
      fc.assert(
        fc.property(arbitraries.pattern, arbitraries.name, fillers, (glob, other, fill) => {
          const made = instance(glob, fill);
          for (const candidate of [other, made, made + other, other + made]) {
            expect(matchGlob(glob, candidate)).toBe(oracle([glob])(candidate));
          }
        }),
        { numRuns: propertyRuns(2000) },
      );
    }
  });

  it('a list holds a name when one of its patterns does', () => {
    // Past eight prefix globs a list keeps its prefixes in Sets: lists of both sizes.
    const prefixGlobs = fc.array(
      name.map((prefix) => `${prefix}*`),
      { minLength: 9, maxLength: 16 },
    );
    const long = fc.tuple(prefixGlobs, patterns).map(([prefixes, more]) => [...prefixes, ...more]);
    for (const lists of [patterns, long]) {
      fc.assert(
        fc.property(lists, name, fillers, (list, other, fill) => {
          const holds = compileNamePatterns(list);
          const candidates = [other, ...list.map((glob) => instance(glob, fill))];
          for (const candidate of candidates) {
            expect(holds(candidate)).toBe(oracle(list)(candidate));
            expect(holds(candidate)).toBe(list.some((glob) => compileGlob(glob)(candidate)));
          }
        }),
        { numRuns: propertyRuns(1000) },
      );
    }
  });

  it('knows its cases: exact, prefix, suffix, infix, all, empty', () => {
    expect(matchGlob('read_*', 'read_file')).toBe(true);
    expect(matchGlob('read_*', 'read_')).toBe(true);
    expect(matchGlob('read_*', 'xread_file')).toBe(false);
    expect(matchGlob('*_file', 'read_file')).toBe(true);
    expect(matchGlob('a*b*a', 'aba')).toBe(true);
    expect(matchGlob('a*a', 'a')).toBe(false);
    expect(matchGlob('*', '')).toBe(true);
    expect(matchGlob('', '')).toBe(true);
    expect(matchGlob('read.*', 'readXfile')).toBe(false);
    expect(compileNamePatterns([])('anything')).toBe(false);
  });

  it('compiles a glob with a hyphen (the regular expression threw on it)', () => {
    expect(compileAllowList(['file-*'])('file-read')).toBe(true);
    expect(toolsBeyond(['file-*'], ['file-read', 'file-*', 'files'])).toEqual(['files']);
  });

  it('answers a many-star glob on a long name without backtracking', () => {
    expect(matchGlob('*a*a*a*a*a*b', 'a'.repeat(100_000))).toBe(false);
    expect(compileAllowList(['*a*a*a*b'])('a'.repeat(512))).toBe(false);
  });
});

describe('the allow list and the spawn check agree', () => {
  /** Child lists that are often within the parent: parent patterns with stars narrowed. */
  const parentAndChild = fc
    .tuple(patterns, patterns, fc.array(pattern, { minLength: 1, maxLength: 3 }))
    .map(([parent, random, narrowers]) => ({
      parent,
      child: [...random, ...parent.map((glob) => instance(glob, narrowers))],
    }));

  it('a child within its parent allows only names the parent allows', () => {
    fc.assert(
      fc.property(parentAndChild, fillers, ({ parent, child }, fill) => {
        const beyond = new Set(toolsBeyond(parent, child));
        const parentAllows = compileAllowList(parent);
        const childAllows = compileAllowList(child);
        for (const tool of child) {
          if (beyond.has(tool)) continue;
          const named = instance(tool, fill);
          expect(childAllows(named)).toBe(true);
          expect(parentAllows(named)).toBe(true);
        }
        if (beyond.size === 0) {
          for (const tool of child) expect(parentAllows(instance(tool, fill))).toBe(true);
        }
      }),
      { numRuns: propertyRuns(2000) },
    );
  });

  it('an exact name is within the parent exactly when the parent allows it', () => {
    fc.assert(
      fc.property(patterns, name, fillers, (parent, other, fill) => {
        const allows = compileAllowList(parent);
        const names = [other, ...parent.map((glob) => instance(glob, fill))];
        for (const tool of names.filter((n) => !n.includes('*'))) {
          expect(toolsBeyond(parent, [tool]).length === 0).toBe(allows(tool));
        }
      }),
      { numRuns: propertyRuns(2000) },
    );
  });

  it('reports each entry beyond once, in the child’s order, and nothing of the parent itself', () => {
    fc.assert(
      fc.property(patterns, patterns, (parent, child) => {
        const beyond = toolsBeyond(parent, [...child, ...child]);
        expect(beyond).toEqual([...new Set(child.filter((t) => toolsBeyond(parent, [t]).length))]);
        expect(toolsBeyond(parent, parent)).toEqual([]);
      }),
    );
    expect(toolsBeyond(['echo', 'read_*'], ['echo', 'read_file', 'read_dir_*'])).toEqual([]);
    expect(toolsBeyond(['echo', 'search'], ['echo', 'delete_all', 'read_*', '*'])).toEqual([
      'delete_all',
      'read_*',
      '*',
    ]);
    expect(toolsBeyond(['*'], ['anything', '*'])).toEqual([]);
  });

  it('the block list and the allow list hold the same names up to 512 characters', () => {
    fc.assert(
      fc.property(patterns, name, fillers, (list, other, fill) => {
        const blocks = compileNameMatcher(list);
        const allows = compileAllowList(list);
        for (const candidate of [other, ...list.map((glob) => instance(glob, fill))]) {
          expect(blocks(candidate)).toBe(allows(candidate));
        }
      }),
    );
  });

  it('beyond 512 characters both fail closed: blocked by a list with a glob, never allowed', () => {
    const long = `danger_${'x'.repeat(600)}`;
    expect(compileNameMatcher(['other_*'])(long)).toBe(true);
    expect(compileNameMatcher(['other'])(long)).toBe(false);
    expect(compileNameMatcher([long])(long)).toBe(true);
    expect(compileNameMatcher(['*'])(long)).toBe(true);
    expect(compileAllowList(['*'])(long)).toBe(false);
    expect(compileAllowList([long])(long)).toBe(false);
  });
});
