// Turns the engine's issues into positions in the draft: CodeMirror diagnostics (gutter marker and
// underline) and the "line L, column C" list under the editor read the same numbers, so what the
// list says is where the marker is. An issue without a source position (a document sent as an
// object never is; text always has one) is placed at the start of the document.
import type { Diagnostic } from '@codemirror/lint';
import type { Text } from '@uiw/react-codemirror';
import type { PolicyIssue } from './batch-client.ts';

export interface PlacedIssue {
  readonly issue: PolicyIssue;
  readonly severity: 'error' | 'warning';
  /** 1-based, clamped to the document. */
  readonly line: number;
  readonly column: number;
}

export function placeIssues(
  doc: Text,
  errors: readonly PolicyIssue[],
  warnings: readonly PolicyIssue[] = [],
): PlacedIssue[] {
  const place = (issue: PolicyIssue, severity: PlacedIssue['severity']): PlacedIssue => {
    const line = Math.min(Math.max(issue.source?.line ?? 1, 1), doc.lines);
    const length = doc.line(line).length;
    const column = Math.min(Math.max(issue.source?.column ?? 1, 1), length + 1);
    return { issue, severity, line, column };
  };
  return [
    ...errors.map((issue) => place(issue, 'error')),
    ...warnings.map((issue) => place(issue, 'warning')),
  ];
}

/** The text an operator reads, also used by the browser test: "line 6, column 13: …". */
export function describePlacement(placed: PlacedIssue): string {
  return `line ${placed.line}, column ${placed.column}: ${placed.issue.message}`;
}

/** From the issue's column to the end of the word (or value) there, at least one character. */
export function toDiagnostics(doc: Text, placed: readonly PlacedIssue[]): Diagnostic[] {
  return placed.map(({ issue, severity, line, column }) => {
    const at = doc.line(line);
    const from = at.from + column - 1;
    const rest = at.text.slice(column - 1);
    const word = /^[^\s,:\]}]+/.exec(rest)?.[0].length ?? 0;
    const to = Math.min(at.to, from + Math.max(word, 1));
    return {
      from,
      to,
      severity,
      message: issue.hint ? `${issue.message} (${issue.hint})` : issue.message,
      source: issue.code,
    };
  });
}
