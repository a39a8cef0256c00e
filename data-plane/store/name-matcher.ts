// The gateway policy's method and tool lists and an agent's allowed tools, compiled once per
// snapshot with the shared name patterns (shared/tools/name-globs.ts: exact names and `*` globs).
// What this module adds is the data plane's rule for over-long names: a name longer than
// MAX_NAME_LENGTH is never allowed, and counts as blocked by a block list that has a glob (fail
// closed); no real tool or method name is that long.
import { compileNamePatterns, isGlob, type NameTest } from '../../shared/tools/name-globs.js';

export type NameMatcher = NameTest;

const MAX_NAME_LENGTH = 512;

/** A block list: whether the name is blocked. */
export function compileNameMatcher(patterns: readonly string[]): NameMatcher {
  const matches = compileNamePatterns(patterns);
  if (patterns.includes('*') || !patterns.some(isGlob)) return matches;
  return (name) => name.length > MAX_NAME_LENGTH || matches(name);
}

/**
 * The same lists used as allow lists: an over-long name is refused rather than matched, so both
 * directions fail closed.
 */
export function compileAllowList(patterns: readonly string[]): NameMatcher {
  const matches = compileNamePatterns(patterns);
  return (name) => name.length <= MAX_NAME_LENGTH && matches(name);
}
