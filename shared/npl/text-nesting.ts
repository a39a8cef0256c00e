// A bound on how deeply an NPL policy text nests, computed before the YAML parser sees it. The YAML
// composer recurses once per nesting level; a few hundred levels of `[` overflow the stack, and
// repeated overflows have been seen to abort the process (V8 "RegExpCompiler Allocation failed").
// The estimate uses the YAML lexer, which is a linear state machine, so brackets inside quoted
// scalars and comments do not count: per token, open flow collections + the line's indentation
// + block indicators (`-`, `?`, `:`) seen on the line so far outside flow collections. Every real
// nesting level needs one of these (inside flow collections, at most two levels per bracket), so
// the estimate is never below half the true depth.
import { Lexer } from 'yaml';

/** The nesting estimate of `source`, or `limit + 1` as soon as it exceeds `limit`. */
export function estimateTextNesting(source: string, limit: number): number {
  let flow = 0;
  let indent = 0;
  let indicators = 0;
  let lineStart = true;
  let max = 0;
  for (const token of new Lexer().lex(source)) {
    const c = token[0];
    if (c === '\n' || c === '\r') {
      lineStart = true;
      indent = 0;
      indicators = 0;
      continue;
    }
    if (lineStart && (c === ' ' || c === '\t')) {
      indent = token.length;
      continue;
    }
    lineStart = false;
    if (c === '[' || c === '{') flow++;
    else if (c === ']' || c === '}') flow = Math.max(0, flow - 1);
    // Block indicators only outside flow collections: inside `[…]`/`{…}` every level opens a
    // bracket (an implicit `[a: b]` pair adds at most one more per bracket).
    else if (flow === 0 && (c === '-' || c === '?' || c === ':') && token.length === 1) {
      indicators++;
    }
    const depth = flow + indent + indicators;
    if (depth > max) {
      max = depth;
      if (max > limit) return limit + 1;
    }
  }
  return max;
}
