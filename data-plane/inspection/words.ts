// Tool names as words, and word patterns. Pure module: no I/O, no framework imports.
//
// A tool name is split into lowercase words at every character that is not a letter or digit
// (snake_case, kebab-case, dots, slashes, spaces), at camelCase boundaries (`deleteFile`,
// `HTTPRequest` → http, request) and between letters and digits (`drop2` → drop, 2). A pattern is
// split the same way, `*` being a glob inside a word; it matches when its words equal a run of
// consecutive words of the name. So `delete` matches `delete_draft` and `bulkDelete`, `drop`
// does not match `dropdown_select`, `drop*` does, and `format_disk` matches `quick_format_disk`.
// A word's glob is the shared name pattern (shared/tools/name-globs.ts), compiled once per list.
import { compileGlob, type NameTest } from '../../shared/tools/name-globs.js';

const MAX_NAME = 512;

function isLower(c: number): boolean {
  return c >= 97 && c <= 122;
}
function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
/** Letters of other scripts are word characters too (no case boundaries for them). */
function isWordChar(c: number, star: boolean): boolean {
  return isLower(c) || isUpper(c) || isDigit(c) || c >= 0x80 || (star && c === 42);
}

/** Splits a name into lowercase words; `star` keeps `*` inside words (for patterns). */
export function splitWords(name: string, star = false): string[] {
  const words: string[] = [];
  const n = Math.min(name.length, MAX_NAME);
  let start = -1;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? name.charCodeAt(i) : 32;
    if (!isWordChar(c, star)) {
      if (start >= 0) words.push(name.slice(start, i).toLowerCase());
      start = -1;
      continue;
    }
    if (start < 0) {
      start = i;
      continue;
    }
    const p = name.charCodeAt(i - 1);
    const boundary =
      (isUpper(c) && (isLower(p) || isDigit(p))) ||
      (isUpper(c) && isUpper(p) && i + 1 < n && isLower(name.charCodeAt(i + 1))) ||
      (isDigit(c) && (isLower(p) || isUpper(p))) ||
      (isDigit(p) && (isLower(c) || isUpper(c)));
    if (boundary) {
      words.push(name.slice(start, i).toLowerCase());
      start = i;
    }
  }
  return words;
}

/** A compiled pattern list: single plain words in a Set, the rest as word sequences. */
export interface WordPatterns {
  /** The first pattern matching the words (its source text), or null. */
  match(words: readonly string[]): string | null;
}

export function compileWordPatterns(patterns: readonly string[]): WordPatterns {
  const plain = new Map<string, string>();
  const sequences: { source: string; words: NameTest[] }[] = [];
  for (const source of patterns) {
    if (typeof source !== 'string') throw new TypeError('word patterns must be strings');
    const words = splitWords(source, true);
    if (words.length === 0) continue;
    if (words.length === 1 && !words[0]!.includes('*')) {
      if (!plain.has(words[0]!)) plain.set(words[0]!, source);
    } else {
      sequences.push({ source, words: words.map(compileGlob) });
    }
  }
  return {
    match(words) {
      for (const word of words) {
        const source = plain.get(word);
        if (source !== undefined) return source;
      }
      for (const { source, words: seq } of sequences) {
        for (let start = 0; start + seq.length <= words.length; start++) {
          let k = 0;
          while (k < seq.length && seq[k]!(words[start + k]!)) k++;
          if (k === seq.length) return source;
        }
      }
      return null;
    },
  };
}
