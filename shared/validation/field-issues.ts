// How every REST route words what is wrong with a request: one `{ field, message }` per problem,
// the field by its path in the request (`persona.tone`, `allowed_tools.3`; `(body)` for the body
// itself), the message in plain words as the end of a sentence whose subject is the field
// ("is required", "must be an integer between 60 and 2592000"), and REQUEST_INVALID carrying all
// of them in `issues` (the error body's field, shared/errors/error-body.ts) and joined in its
// message. The wording is zod's error map for the route's schema (wordIssues): a message a schema
// writes itself (a refinement's) is kept; zod's own ("Invalid input: expected string, received
// undefined") never reaches a client. GraphQL reports its input issues in the same shape
// (control-plane/graphql/errors.ts).
import { z } from 'zod';
import { type FieldIssue, type GatewayError, gatewayError } from '../errors/index.js';

const MISSING_CODES: ReadonlySet<string> = new Set([
  'invalid_type',
  'invalid_union',
  'invalid_value',
]);

/** The field name of a problem with the body as a whole (not an object, say). */
export const BODY_FIELD = '(body)';

type IssueWording = (issue: z.core.$ZodRawIssue) => string | undefined;
type RawIssue<Code extends string> = Extract<z.core.$ZodRawIssue, { code: Code }>;

/**
 * zod's error map for a request schema (a parse option, `{ error: wordIssues(schema) }`): each
 * issue in plain words. Ranges are read from the schema at the issue's path, so a number out of
 * range, of the wrong type or not whole is said the same way: "must be an integer between 60 and
 * 2592000". Undefined keeps zod's message, which only custom refinements reach.
 */
export function wordIssues(root: z.ZodType): IssueWording {
  return (issue) => {
    // A missing field fails its type, its union or its enum: it is said to be missing.
    if (issue.input === undefined && MISSING_CODES.has(issue.code)) return 'is required';
    switch (issue.code) {
      case 'invalid_type':
        return wordInvalidType(issue, schemaAt(root, issue.path ?? []));
      case 'too_small':
      case 'too_big':
        return wordSize(issue, schemaAt(root, issue.path ?? []));
      case 'unrecognized_keys': {
        const known = issue.inst instanceof z.ZodObject ? Object.keys(issue.inst.shape) : [];
        return known.length === 0
          ? 'is not a field of this request'
          : `is not a field of this request (its fields: ${known.join(', ')})`;
      }
      case 'invalid_value':
        return `must be ${issue.values.length === 1 ? '' : 'one of '}${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
      case 'invalid_format':
        return issue.format === 'regex'
          ? 'is not in the form this field takes'
          : `must be a valid ${issue.format}`;
      case 'invalid_union':
        return 'matches none of the forms this field takes';
      case 'invalid_key':
        return 'has a key that is not allowed here';
      default:
        return undefined;
    }
  };
}

/** Every problem of a refused request, one per field and message, in the order zod found them. */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  const add = (path: readonly PropertyKey[], message: string) => {
    const field = path.length === 0 ? BODY_FIELD : path.map(String).join('.');
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    issues.push({ field, message });
  };
  for (const issue of error.issues) {
    // An unknown key is reported on its object: each key is the field at fault.
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add([...issue.path, key], issue.message);
    } else add(issue.path, issue.message);
  }
  return issues;
}

/** The issues as one sentence per field: `ttl_seconds must be …; reason is required`. */
export function describeIssues(issues: readonly FieldIssue[]): string {
  return issues
    .map((issue) =>
      issue.field === BODY_FIELD ? `the body ${issue.message}` : `${issue.field} ${issue.message}`,
    )
    .join('; ');
}

/** REQUEST_INVALID listing `issues` (at least one); `details` adds facts of the route's own. */
export function requestInvalid(
  issues: readonly FieldIssue[],
  details?: Readonly<Record<string, unknown>>,
): GatewayError<'REQUEST_INVALID'> {
  return gatewayError(
    'REQUEST_INVALID',
    { problem: describeIssues(issues) },
    { details: { ...details, issues } },
  );
}

/** REQUEST_INVALID about one field. */
export function invalidField(field: string, message: string): GatewayError<'REQUEST_INVALID'> {
  return requestInvalid([{ field, message }]);
}

function wordInvalidType(
  issue: RawIssue<'invalid_type'>,
  schema: z.core.$ZodType | undefined,
): string {
  const given = `, not ${describeValue(issue.input)}`;
  if (schema instanceof z.ZodNumber) return `must be ${numberRange(schema)}${given}`;
  return `must be ${EXPECTED[issue.expected] ?? issue.expected}${given}`;
}

function wordSize(
  issue: RawIssue<'too_small' | 'too_big'>,
  schema: z.core.$ZodType | undefined,
): string {
  if (schema instanceof z.ZodNumber) return `must be ${numberRange(schema)}`;
  const small = issue.code === 'too_small';
  const bound = Number(small ? issue.minimum : issue.maximum);
  if (issue.origin === 'string') {
    if (small && bound === 1) return 'must not be empty';
    const [min, max] = schema instanceof z.ZodString ? [schema.minLength, schema.maxLength] : [];
    if (min !== null && min !== undefined && min > 1 && max !== null && max !== undefined) {
      return `must be ${min} to ${max} characters long`;
    }
    return `must be at ${small ? 'least' : 'most'} ${bound} ${bound === 1 ? 'character' : 'characters'}`;
  }
  if (issue.origin === 'array' || issue.origin === 'set') {
    if (small && bound === 1) return 'must not be empty';
    return `must list at ${small ? 'least' : 'most'} ${bound} ${bound === 1 ? 'item' : 'items'}`;
  }
  return `must be at ${small ? 'least' : 'most'} ${bound}`;
}

const EXPECTED: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'a JSON object',
  record: 'a JSON object',
  array: 'an array',
  null: 'null',
};

/** "an integer between 60 and 2592000", "a number of at least 0", "an integer". */
function numberRange(schema: z.ZodNumber): string {
  const kind = schema.isInt ? 'an integer' : 'a number';
  const min = finite(schema.minValue);
  const max = finite(schema.maxValue);
  if (min !== undefined && max !== undefined) return `${kind} between ${min} and ${max}`;
  if (min !== undefined) return `${kind} of at least ${min}`;
  if (max !== undefined) return `${kind} of at most ${max}`;
  return kind;
}

/** A bound the schema set; z.int()'s own safe-integer range is no bound worth saying. */
function finite(bound: number | null): number | undefined {
  if (bound === null || !Number.isFinite(bound)) return undefined;
  return Math.abs(bound) >= Number.MAX_SAFE_INTEGER ? undefined : bound;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return Number.isFinite(value) ? String(value) : 'a number';
    case 'boolean':
      return String(value);
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** The schema of the value at `path`, through optional, nullable, default and pipe wrappers. */
function schemaAt(
  root: z.core.$ZodType,
  path: readonly PropertyKey[],
): z.core.$ZodType | undefined {
  let node: z.core.$ZodType | undefined = unwrap(root);
  for (const segment of path) {
    if (node instanceof z.ZodObject) node = node.shape[String(segment)] as z.core.$ZodType;
    else if (node instanceof z.ZodArray) node = node.element as z.core.$ZodType;
    else if (node instanceof z.ZodRecord) node = node.valueType as z.core.$ZodType;
    else return undefined;
    if (node === undefined) return undefined;
    node = unwrap(node);
  }
  return node;
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let node = schema;
  for (;;) {
    const def = node._zod.def as { innerType?: z.core.$ZodType; in?: z.core.$ZodType };
    if (def.innerType !== undefined) node = def.innerType;
    else if (node instanceof z.ZodPipe && def.in !== undefined) node = def.in;
    else return node;
  }
}
