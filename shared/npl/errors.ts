// The closed set of NPL error and issue codes. Every failure of this library is an `NplError`
// with one of `NPL_ERROR_CODES`; the problems it found are data (`issues`), each with its own
// code from `NPL_ISSUE_CODES`, a JSON path into the document and, for conditions, a position.
// docs/npl.md lists the same codes; tests/shared/npl/errors.test.ts keeps them in step.

export const NPL_ERROR_CODES = {
  NPL_INVALID_DOCUMENT: 'The policy document is not valid NPL.',
  NPL_INVALID_CONDITION: 'A condition does not parse or fails its static checks.',
  NPL_INVALID_URI: 'A policy URI is not of the form svc://<policy-name>@<major.minor.patch>.',
  NPL_REGISTRY_NOT_FOUND: 'No policy is published under that name and version.',
  NPL_REGISTRY_IMMUTABLE: 'That name and version is already published with other content.',
} as const;

export type NplErrorCode = keyof typeof NPL_ERROR_CODES;

export const NPL_ISSUE_CODES = {
  syntax: 'The YAML or JSON text does not parse.',
  invalid_type: 'A value has the wrong type.',
  missing_field: 'A required field is absent.',
  unknown_field: 'A field that NPL does not define is present.',
  invalid_value: 'A value is outside its allowed set or format.',
  empty_list: 'A list that must be non-empty is empty.',
  duplicate_rule_id: 'Two rules share a ruleId.',
  condition_syntax: 'A condition does not parse.',
  unknown_identifier: 'A condition starts a path with a name that is not a context field.',
  unknown_method: 'A condition calls a method NPL does not define.',
  invalid_operand: 'An operator is applied to an operand it cannot use.',
  invalid_regex: 'A `matches` pattern is malformed or outside the linear-time subset.',
  limit_exceeded: 'A condition is longer or more deeply nested than allowed.',
  invalid_uri: 'A policy URI is malformed or unpinned.',
  always_false:
    'A warning: an ordering operator against a non-numeric string literal, which is always false.',
  same_as_previous:
    'A warning: the document equals the previous published version of its policy apart from its version.',
} as const;

export type NplIssueCode = keyof typeof NPL_ISSUE_CODES;

export type NplPathSegment = string | number;

/**
 * One problem found in a document, a condition or a URI. Warnings (`always_false`,
 * `same_as_previous`) have the same shape but never make a document invalid: they come back beside
 * the policy.
 */
export interface NplIssue {
  readonly code: NplIssueCode;
  readonly message: string;
  /** JSON path of the offending value inside the policy document (`[]` outside a document). */
  readonly path: readonly NplPathSegment[];
  readonly hint?: string;
  /** Index of the rule whose condition is at fault. */
  readonly ruleIndex?: number;
  /** 1-based line and column inside the condition text. */
  readonly line?: number;
  readonly column?: number;
  /** The condition line with a caret under the error column. */
  readonly excerpt?: string;
  /** 1-based position in the YAML/JSON source text, when the document was parsed from text. */
  readonly source?: { readonly line: number; readonly column: number };
}

export class NplError extends Error {
  override readonly name = 'NplError';
  readonly code: NplErrorCode;
  readonly issues: readonly NplIssue[];

  constructor(code: NplErrorCode, issues: readonly NplIssue[], message?: string) {
    super(message ?? summarize(code, issues));
    this.code = code;
    this.issues = issues;
  }
}

function summarize(code: NplErrorCode, issues: readonly NplIssue[]): string {
  const first = issues[0];
  if (!first) return NPL_ERROR_CODES[code];
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  const where = first.path.length > 0 ? `${formatIssuePath(first.path)}: ` : '';
  return `${where}${first.message}${more}`;
}

/** `rules[0].condition` style rendering of a JSON path; `$` for the root. */
export function formatIssuePath(path: readonly NplPathSegment[]): string {
  let out = '';
  for (const segment of path) {
    out += typeof segment === 'number' ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  }
  return out === '' ? '$' : out;
}
