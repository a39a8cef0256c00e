// Matches method and tool names against a policy's list of exact names and `*` globs. Compiled
// once per snapshot: exact names go into a Set, globs into one anchored regular expression whose
// only quantifier is `[^]*` between literals; names longer than MAX_NAME_LENGTH are not matched
// at all but count as blocked (fail closed), so matching stays cheap on any input.

export type NameMatcher = (name: string) => boolean;

const MAX_NAME_LENGTH = 512;
const NEVER: NameMatcher = () => false;

export function compileNameMatcher(patterns: readonly string[]): NameMatcher {
  const exact = new Set<string>();
  const globs: string[] = [];
  for (const pattern of patterns) {
    if (pattern === '*') return () => true;
    if (pattern.includes('*')) globs.push(pattern);
    else exact.add(pattern);
  }
  if (exact.size === 0 && globs.length === 0) return NEVER;
  const regex =
    globs.length === 0
      ? undefined
      : new RegExp(`^(?:${globs.map(globToRegexSource).join('|')})$`, 'u');
  return (name) => {
    if (exact.has(name)) return true;
    if (regex === undefined) return false;
    // Lists are block lists: a name too long to match cheaply counts as matched (fail closed).
    return name.length > MAX_NAME_LENGTH || regex.test(name);
  };
}

function globToRegexSource(glob: string): string {
  return glob
    .split('*')
    .map((part) => part.replace(/[\\^$.|?+()[\]{}/-]/g, '\\$&'))
    .join('[^]*');
}

/**
 * The same lists used as allow lists: an over-long name is refused rather than matched, so both
 * directions fail closed.
 */
export function compileAllowList(patterns: readonly string[]): NameMatcher {
  const matches = compileNameMatcher(patterns);
  return (name) => name.length <= MAX_NAME_LENGTH && matches(name);
}
