// Turns the schema's findings (zod issues) into NPL issues: NPL's own codes, paths and wording,
// which are a public contract (docs/npl.md, the compliance endpoint's `errors[]`), and a stable
// order — the order of the document, unknown fields first at each level — whatever order the
// schema library finds them in.
import type { z } from 'zod';
import type { NplIssue, NplPathSegment } from './errors.js';
import { NPL_POLICY_FIELDS, NPL_RULE_FIELDS } from './policy-schema.js';

const AGENTS_HINT = 'use ["*"] for every agent';

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** `rules[3]` inside a rule, `version` at the top: the known fields of the object at `path`. */
function fieldsAt(path: readonly PropertyKey[]): readonly string[] {
  return path.length === 0 ? NPL_POLICY_FIELDS : NPL_RULE_FIELDS;
}

function asPath(path: readonly PropertyKey[]): NplPathSegment[] {
  return path.filter((s): s is NplPathSegment => typeof s !== 'symbol');
}

/** An NPL issue and where it sorts: a missing field is reported on its parent object but sorts
 * where the field would be. */
export interface PlacedIssue {
  readonly issue: NplIssue;
  readonly at: readonly NplPathSegment[];
}

/** The NPL issues of the schema's issues, unsorted. */
export function toDocumentIssues(zodIssues: readonly z.core.$ZodIssue[]): PlacedIssue[] {
  // A length check also runs on a value of the wrong type that has a length (`rules: ""`,
  // `ruleId: []`): the type issue at the same path already says what is wrong.
  const wrongTypeAt = new Set(
    zodIssues.filter((i) => i.code === 'invalid_type').map((i) => JSON.stringify(i.path)),
  );
  return zodIssues.flatMap((issue) =>
    issue.code === 'too_small' && wrongTypeAt.has(JSON.stringify(issue.path))
      ? []
      : placeIssue(issue),
  );
}

/** The NPL issues of one zod issue (one per key for unrecognized keys). */
function placeIssue(zodIssue: z.core.$ZodIssue): PlacedIssue[] {
  const at = asPath(zodIssue.path);
  if (zodIssue.code === 'unrecognized_keys') {
    const hint = `allowed fields: ${fieldsAt(at).join(', ')}`;
    return zodIssue.keys.map((key) => ({
      issue: {
        code: 'unknown_field',
        message: `unknown field ${JSON.stringify(key)}`,
        path: [...at, key],
        hint,
      },
      at: [...at, key],
    }));
  }
  return [{ issue: toDocumentIssue(zodIssue, at), at }];
}

function toDocumentIssue(issue: z.core.$ZodIssue, path: NplPathSegment[]): NplIssue {
  const last = path[path.length - 1];
  const field = typeof last === 'string' ? last : undefined;
  const input = issue.input;
  switch (issue.code) {
    case 'invalid_type':
      return wrongType(path, field, input);
    case 'too_small':
      if (issue.origin === 'array') {
        return {
          code: 'empty_list',
          message: `${field} must not be empty`,
          path,
          ...(field === 'targetAgents' ? { hint: AGENTS_HINT } : {}),
        };
      }
      // An empty targetAgents entry reads like a wrong type: "must be a non-empty string".
      if (field === undefined) return wrongType(path, field, input);
      return { code: 'invalid_value', message: `${field} must not be empty`, path };
    case 'invalid_format':
      return badFormat(path, field, input);
    case 'invalid_value':
      // An enum reports an absent value, or one of another type, as a value outside its set.
      if (typeof input !== 'string') return wrongType(path, field, input);
      return {
        code: 'invalid_value',
        message: `${field} must be one of ${issue.values.join(', ')}, not ${JSON.stringify(input)}`,
        path,
      };
    default:
      return { code: 'invalid_value', message: issue.message, path };
  }
}

function wrongType(path: NplPathSegment[], field: string | undefined, input: unknown): NplIssue {
  if (input === undefined && field !== undefined) {
    return {
      code: 'missing_field',
      message: `${field} is required`,
      path: path.slice(0, -1),
      ...(field === 'targetAgents' ? { hint: AGENTS_HINT } : {}),
    };
  }
  const actual = typeName(input);
  let message: string;
  if (path.length === 0) message = `a policy document must be an object, not ${actual}`;
  else if (path[0] === 'targetAgents' && path.length === 2) {
    message = `targetAgents[${path[1]}] must be a non-empty string`;
  } else if (path[0] === 'rules' && path.length === 2) {
    message = `a rule must be an object, not ${actual}`;
  } else if (field === 'targetAgents') {
    message = `targetAgents must be a list of strings, not ${actual}`;
  } else if (field === 'rules') message = `rules must be a list, not ${actual}`;
  else {
    return {
      code: 'invalid_type',
      message: `${field} must be a string, not ${actual}`,
      path,
      ...(typeof input === 'number' ? { hint: 'quote it in YAML, e.g. "1.0.0"' } : {}),
    };
  }
  return { code: 'invalid_type', message, path };
}

function badFormat(path: NplPathSegment[], field: string | undefined, input: unknown): NplIssue {
  const value = JSON.stringify(input);
  if (field === 'version') {
    return {
      code: 'invalid_value',
      message: `version ${value} is not a semantic version`,
      path,
      hint: 'write major.minor.patch, e.g. 1.0.0',
    };
  }
  return {
    code: 'invalid_value',
    message: `${field} ${value} is not kebab-case`,
    path,
    hint: 'lower-case letters and digits separated by single hyphens, e.g. payments-guard',
  };
}

/** Document order: numbers ascending, fields in schema order with unknown fields first. */
export function compareSortPaths(
  a: readonly NplPathSegment[],
  b: readonly NplPathSegment[],
): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    const fields = fieldsAt(a.slice(0, i));
    return fields.indexOf(String(x)) - fields.indexOf(String(y));
  }
  return a.length - b.length;
}
