// The one JSON shape of an error answer, on every HTTP surface that is not a decision or an RFC's
// own format: `{ error, reasonCode, message, hint }` (plus details), the code from the registry.
// The data plane's error plugin sends it; control-plane REST routes document it with the same
// schema.
import { ERROR_CODES, type ErrorCode } from './codes.js';

export interface ErrorBody {
  readonly error: ErrorCode;
  readonly reasonCode: ErrorCode;
  readonly message: string;
  readonly hint: string;
  readonly [detail: string]: unknown;
}

/** JSON Schema of ErrorBody, for route response schemas (and so for OpenAPI). */
export const errorBodySchema = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    reasonCode: { type: 'string' },
    message: { type: 'string' },
    hint: { type: 'string' },
  },
  required: ['error', 'reasonCode', 'message'],
  additionalProperties: true,
} as const;

export function buildErrorBody(
  code: ErrorCode,
  message: string,
  details?: Readonly<Record<string, unknown>>,
): ErrorBody {
  return { ...details, error: code, reasonCode: code, message, hint: ERROR_CODES[code].hint };
}
