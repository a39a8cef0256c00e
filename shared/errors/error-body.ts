// The one JSON shape of an error answer, on every HTTP surface that is not a decision or an RFC's
// own format: `{ error, reasonCode, message, hint }` (plus details), the code from the registry.
// A validation refusal also lists every problem in `issues` (`{ field, message }`, the field by
// its path in the request, the message in plain words: shared/validation/field-issues.ts), as
// GraphQL's `extensions.issues` do; `docs` names the documentation page of the request (the
// route's, or one the error names itself). The data plane's error plugin sends it; control-plane
// REST routes document it with the same schema.
import type { ErrorCode } from './codes.js';
import type { GatewayError } from './gateway-error.js';

/** One problem of a request: the field by its path (`persona.tone`, `allowed_tools.3`). */
export interface FieldIssue {
  readonly field: string;
  /** What is wrong, in plain words, as the end of a sentence whose subject is the field. */
  readonly message: string;
}

export interface ErrorBody {
  readonly error: ErrorCode;
  readonly reasonCode: ErrorCode;
  readonly message: string;
  readonly hint: string;
  /** Every problem of a refused request (validation refusals). */
  readonly issues?: readonly FieldIssue[];
  /** The documentation page of the request, as a path in the repository (`docs/spawn.md#request`). */
  readonly docs?: string;
  readonly [detail: string]: unknown;
}

/** JSON Schema of FieldIssue. */
export const fieldIssueSchema = {
  type: 'object',
  properties: {
    field: {
      type: 'string',
      description:
        'The field by its path in the request (`persona.tone`, `allowed_tools.3`); `(body)` for the body itself.',
    },
    message: {
      type: 'string',
      description:
        'What is wrong with it, in plain words (`is required`, `must be at most 500 characters`).',
    },
  },
  required: ['field', 'message'],
} as const;

/** JSON Schema of ErrorBody, for route response schemas (and so for OpenAPI). */
export const errorBodySchema = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    reasonCode: { type: 'string' },
    message: { type: 'string' },
    hint: { type: 'string' },
    issues: {
      type: 'array',
      items: fieldIssueSchema,
      description:
        'Validation refusals: every problem of the request, one entry per field and problem.',
    },
    docs: {
      type: 'string',
      description:
        'The documentation page of the request, a path in the gateway repository (`docs/agentiam.md#issue-a-credential`).',
    },
  },
  required: ['error', 'reasonCode', 'message'],
  additionalProperties: true,
} as const;

/**
 * The body of an error: its details, then the registry's code, the message, the hint (the
 * subject's own when the error names one) and the docs page — the error's own, else `docs`.
 */
export function buildErrorBody(error: GatewayError, docs?: string): ErrorBody {
  const body: Record<string, unknown> = {
    ...error.details,
    error: error.code,
    reasonCode: error.code,
    message: error.message,
    hint: error.hint,
  };
  if (body.docs === undefined && docs !== undefined) body.docs = docs;
  return body as ErrorBody;
}
