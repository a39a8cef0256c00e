// The body validator of a route whose contract is a zod schema: the one compiler both planes'
// routes give Fastify as `validatorCompiler`. Fastify's own validator (Ajv with its defaults)
// would strip unknown fields and coerce types, so a route documents its schema in OpenAPI and
// validates with zod here: strictly, without coercion, the parsed value replacing the body.
//
// Every problem is worded the one way of field-issues.ts (zod's error map for the schema), and
// the refusal is REQUEST_INVALID listing them all, unless the route answers in a format of its
// own (`refuse`: an RFC 7591 body) from the same issues. Optional steps around the schema:
// `before` for cheap bounds that protect it (a 413 before any field is read), `after` for what
// follows it (more bounds, normalization). Other request parts (params, headers) pass unchanged:
// a route checks those itself. Written against Fastify's compiler shape without importing
// Fastify (shared is pure).
import type { z } from 'zod';
import { fieldIssues, requestInvalid, wordIssues } from './field-issues.js';

/** What Fastify's validator answers: the value that replaces the part, or the refusal. */
export type ValidationResult = { readonly value: unknown } | { readonly error: Error };

/** Fastify's `validatorCompiler` route option: called once per part that has a schema. */
export type ValidatorCompiler = (route: {
  readonly httpPart?: string;
}) => (data: unknown) => ValidationResult;

export interface BodyValidatorOptions<Schema extends z.ZodType, Body> {
  /** The refusal of the schema's issues; default REQUEST_INVALID listing every one. */
  readonly refuse?: (error: z.ZodError<z.output<Schema>>) => Error;
  /** Checked before the schema: a refusal, or undefined to go on. */
  readonly before?: (data: unknown) => Error | undefined;
  /** After the schema: the body the handler gets, or a refusal. */
  readonly after?: (parsed: z.output<Schema>) => Body | Error;
}

const passThrough = (value: unknown): ValidationResult => ({ value });

/** REQUEST_INVALID listing every issue of the schema. */
const refuseAll = (error: z.ZodError) => requestInvalid(fieldIssues(error));

/** The body check alone: the body the handler gets, or the route's refusal. */
export function checkBodyWith<Schema extends z.ZodType, Body = z.output<Schema>>(
  schema: Schema,
  options: BodyValidatorOptions<Schema, Body> = {},
): (data: unknown) => Body | Error {
  const { before, after, refuse = refuseAll } = options;
  const parse = { error: wordIssues(schema) };
  return (data) => {
    const early = before?.(data);
    if (early !== undefined) return early;
    const parsed = schema.safeParse(data, parse);
    if (!parsed.success) return refuse(parsed.error);
    return after === undefined ? (parsed.data as Body) : after(parsed.data);
  };
}

/** The route's `validatorCompiler`: the body checked by `checkBodyWith`, other parts passed. */
export function compileBodyValidator<Schema extends z.ZodType, Body = z.output<Schema>>(
  schema: Schema,
  options: BodyValidatorOptions<Schema, Body> = {},
): ValidatorCompiler {
  const check = checkBodyWith(schema, options);
  const validate = (data: unknown): ValidationResult => {
    const checked = check(data);
    return checked instanceof Error ? { error: checked } : { value: checked };
  };
  return ({ httpPart }) => (httpPart === 'body' ? validate : passThrough);
}
