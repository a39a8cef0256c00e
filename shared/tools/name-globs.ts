// Name patterns: the one definition of the `*` globs that agents' allowed tools, the gateway
// policy's blocked tools and methods, and destructive tool-name words are written in. A pattern
// without `*` is an exact name; `*` matches any run of characters (none included); every other
// character stands for itself; `*` alone matches every name. Pure: the data plane's allow and
// block lists (data-plane/store/name-matcher.ts) and word patterns (data-plane/inspection/
// words.ts) match with it, the control plane's spawn checks a child's tools with `toolsBeyond`.
//
// Matching is linear-ish and uses no regular expression: the literal pieces between stars are
// found leftmost-first (startsWith, indexOf, endsWith), which is exact for `*`-only globs. The
// anchored regular expression used before backtracked (`*a*a*a*b` took 54 s on a 512-character
// name) and threw on a glob with `-` (no valid escape under its `u` flag). Measured on names of
// 9-35 characters: a list of five patterns ~70 ns a name, as the regular expression; fifty
// prefix globs ~160 ns (the regular expression ~75 ns).

/** Whether a name is held: one compiled pattern or pattern list. */
export type NameTest = (name: string) => boolean;

/** The pattern that matches every name. */
export const ALL_NAMES = '*';

const ANY: NameTest = () => true;
const NONE: NameTest = () => false;

export function isGlob(pattern: string): boolean {
  return pattern.includes('*');
}

/** One pattern, compiled once: its head, tail and the pieces between its stars. */
export function compileGlob(pattern: string): NameTest {
  const pieces = pattern.split('*');
  if (pieces.length === 1) return (name) => name === pattern;
  const head = pieces[0] as string;
  const tail = pieces[pieces.length - 1] as string;
  const middle = pieces.slice(1, -1).filter((piece) => piece !== '');
  if (middle.length === 0) {
    if (tail === '') return head === '' ? ANY : (name) => name.startsWith(head);
    const least = head.length + tail.length;
    return (name) => name.length >= least && name.startsWith(head) && name.endsWith(tail);
  }
  let least = head.length + tail.length;
  for (const piece of middle) least += piece.length;
  return (name) => {
    if (name.length < least || !name.startsWith(head) || !name.endsWith(tail)) return false;
    const end = name.length - tail.length;
    let at = head.length;
    for (let i = 0; i < middle.length; i++) {
      const piece = middle[i] as string;
      const found = name.indexOf(piece, at);
      if (found < 0 || found + piece.length > end) return false;
      at = found + piece.length;
    }
    return true;
  };
}

/** One pattern against one name, uncompiled. */
export function matchGlob(pattern: string, name: string): boolean {
  return compileGlob(pattern)(name);
}

/**
 * Whether a pattern list holds a name: exact names in a Set, globs compiled once. Prefix globs
 * (`read_*`, the common kind) go into one Set per prefix length once there are more than
 * PREFIX_SETS_FROM of them: a Set lookup costs a slice, a few startsWith calls cost less.
 */
export function compileNamePatterns(patterns: readonly string[]): NameTest {
  const exact = new Set<string>();
  const prefixGlobs: string[] = [];
  const globs: NameTest[] = [];
  for (const pattern of patterns) {
    if (pattern === ALL_NAMES) return ANY;
    const star = pattern.indexOf('*');
    if (star < 0) exact.add(pattern);
    else if (star === pattern.length - 1) prefixGlobs.push(pattern);
    else globs.push(compileGlob(pattern));
  }
  const prefixSets = prefixGlobs.length > PREFIX_SETS_FROM ? byLength(prefixGlobs) : [];
  if (prefixSets.length === 0) globs.push(...prefixGlobs.map(compileGlob));
  if (prefixSets.length === 0 && globs.length === 0) {
    return exact.size === 0 ? NONE : (name) => exact.has(name);
  }
  return (name) => {
    if (exact.has(name)) return true;
    for (let i = 0; i < prefixSets.length; i++) {
      const [length, prefixes] = prefixSets[i] as PrefixSet;
      if (name.length >= length && prefixes.has(name.slice(0, length))) return true;
    }
    for (let i = 0; i < globs.length; i++) if ((globs[i] as NameTest)(name)) return true;
    return false;
  };
}

const PREFIX_SETS_FROM = 8;
type PrefixSet = readonly [length: number, prefixes: ReadonlySet<string>];

function byLength(prefixGlobs: readonly string[]): PrefixSet[] {
  const prefixesOf = new Map<number, Set<string>>();
  for (const glob of prefixGlobs) {
    const prefix = glob.slice(0, -1);
    const prefixes = prefixesOf.get(prefix.length);
    if (prefixes) prefixes.add(prefix);
    else prefixesOf.set(prefix.length, new Set([prefix]));
  }
  return [...prefixesOf];
}

/**
 * The child's patterns its parent's do not hold, each once, in the child's order (spec §2.3: a
 * sub-agent's tools are a subset of its parent's). A child's entry is held when the parent lists
 * it, lists `*`, or lists a glob matching it — a child glob included, read as text: its own `*`
 * must then fall under one of the parent's stars, so every name it matches the parent's glob
 * matches too. Sound, not complete: a child glob only the union of several parent globs covers
 * is reported.
 */
export function toolsBeyond(parent: readonly string[], child: readonly string[]): string[] {
  const holds = compileNamePatterns(parent);
  return [...new Set(child.filter((tool) => !holds(tool)))];
}
