// Policy text (YAML or JSON) → data, keeping the parsed YAML document so that every issue found
// later can be given its line and column in the text. Hostile text is bounded before the YAML
// parser sees it: its length, and its nesting (the parser's composer recurses once per level).
import { isDocument, isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import type { NplIssue, NplPathSegment } from './errors.js';
import { estimateTextNesting } from './text-nesting.js';

const MAX_SOURCE_LENGTH = 64 * 1024 * 1024;
/** Deepest nesting of a policy text (YAML flow and block levels) the parser is given. */
export const MAX_TEXT_NESTING = 128;

export interface PolicyText {
  readonly data: unknown;
  /**
   * Source position of a path (best effort): of the key itself when `atKey`, of the character
   * `offset` inside the string value when given, else of the nearest node on the path.
   */
  locate(
    path: readonly NplPathSegment[],
    offset?: number,
    atKey?: boolean,
  ): { line: number; column: number } | undefined;
}

/** Parses policy text; the issues when it is not YAML/JSON or is out of bounds. */
export function readPolicyText(source: string): PolicyText | NplIssue[] {
  if (source.length > MAX_SOURCE_LENGTH) {
    return [
      {
        code: 'syntax',
        message: `document is larger than ${MAX_SOURCE_LENGTH} characters`,
        path: [],
      },
    ];
  }
  if (estimateTextNesting(source, MAX_TEXT_NESTING) > MAX_TEXT_NESTING) {
    return [
      {
        code: 'limit_exceeded',
        message: `document nests more than ${MAX_TEXT_NESTING} levels deep`,
        path: [],
        hint: 'an NPL document needs a handful of levels; flatten the document',
      },
    ];
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    return doc.errors.map((error) => {
      const pos = lineCounter.linePos(error.pos[0]);
      return {
        code: 'syntax',
        message: error.message.split('\n')[0] ?? 'syntax error',
        path: [],
        hint: 'the document must be valid YAML or JSON',
        source: { line: pos.line, column: pos.col },
      } satisfies NplIssue;
    });
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return [{ code: 'syntax', message: (error as Error).message, path: [] }];
  }
  return {
    data,
    locate(path, offset, atKey) {
      if (!isDocument(doc)) return undefined;
      if (atKey && path.length > 0) {
        const parent = doc.getIn(path.slice(0, -1), true);
        const pair = isMap(parent)
          ? parent.items.find((p) => isScalar(p.key) && p.key.value === path[path.length - 1])
          : undefined;
        const range = isScalar(pair?.key) ? pair.key.range : undefined;
        if (range) {
          const pos = lineCounter.linePos(range[0]);
          return { line: pos.line, column: pos.col };
        }
      }
      for (let n = path.length; n >= 0; n--) {
        const node = doc.getIn(path.slice(0, n), true) as
          | { range?: [number, number, number]; type?: string; value?: unknown }
          | undefined;
        const range = node?.range;
        if (!range) continue;
        let at = range[0];
        if (offset !== undefined && n === path.length && typeof node.value === 'string') {
          const quoted = node.type === 'QUOTE_SINGLE' || node.type === 'QUOTE_DOUBLE' ? 1 : 0;
          const text = node.value;
          if (source.slice(at + quoted, at + quoted + text.length) === text) at += quoted + offset;
        }
        const pos = lineCounter.linePos(at);
        return { line: pos.line, column: pos.col };
      }
      return undefined;
    },
  };
}
