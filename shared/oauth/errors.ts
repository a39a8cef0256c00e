// The RFC error strings of the OAuth endpoints. Every OAuth failure is a GatewayError with an
// OAUTH_* code from the registry (status and wording live there); the endpoints answer it as the
// RFC's own body `{ error, error_description }` (RFC 6749 §5.2, RFC 7009, RFC 7662, RFC 8707),
// with the `error` string this table gives. Registration (RFC 7591 §3.2.2) has two strings of
// its own, carried by OAUTH_INVALID_REQUEST with the string in the error's details.
import { type ErrorCode, type FieldIssue, fieldIssueSchema } from '../errors/index.js';

/** RFC 6749 §5.2 (+ RFC 8707 invalid_target, + 429 temporarily_unavailable) error strings. */
export const OAUTH_ERROR_STRINGS = {
  OAUTH_INVALID_REQUEST: 'invalid_request',
  OAUTH_INVALID_CLIENT: 'invalid_client',
  OAUTH_INVALID_GRANT: 'invalid_grant',
  OAUTH_INVALID_TARGET: 'invalid_target',
  OAUTH_UNSUPPORTED_GRANT_TYPE: 'unsupported_grant_type',
  OAUTH_UNAUTHORIZED_CLIENT: 'unauthorized_client',
  OAUTH_TOKEN_OF_ANOTHER_CLIENT: 'unauthorized_client',
  OAUTH_RATE_LIMITED: 'temporarily_unavailable',
} as const satisfies Partial<Record<ErrorCode, string>>;

export type OAuthErrorCode = keyof typeof OAUTH_ERROR_STRINGS;

/** RFC 7591 §3.2.2 registration error strings (answered with OAUTH_INVALID_REQUEST's status). */
export const OAUTH_REGISTRATION_ERRORS = {
  INVALID_CLIENT_METADATA: 'invalid_client_metadata',
  INVALID_REDIRECT_URI: 'invalid_redirect_uri',
} as const;

export type OAuthRegistrationError =
  (typeof OAUTH_REGISTRATION_ERRORS)[keyof typeof OAUTH_REGISTRATION_ERRORS];

export type OAuthErrorString =
  | (typeof OAUTH_ERROR_STRINGS)[OAuthErrorCode]
  | OAuthRegistrationError;

/**
 * The body every OAuth endpoint answers a failure with (never a reasonCode). A registration
 * refusal adds the gateway's `issues` (every wrong field) and `docs` (the page of the request),
 * members RFC 7591 clients ignore.
 */
export interface OAuthErrorBody {
  readonly error: OAuthErrorString;
  readonly error_description: string;
  readonly issues?: readonly FieldIssue[];
  readonly docs?: string;
}

export function isOAuthErrorCode(code: string): code is OAuthErrorCode {
  return Object.hasOwn(OAUTH_ERROR_STRINGS, code);
}

/** The RFC `error` string of an OAUTH_* code. */
export function oauthErrorString(
  code: OAuthErrorCode,
): (typeof OAUTH_ERROR_STRINGS)[OAuthErrorCode] {
  return OAUTH_ERROR_STRINGS[code];
}

/**
 * The RFC body of an OAuth failure. A registration failure names its RFC 7591 string in
 * `details.oauthError`; every other code takes the string of the table.
 */
export function buildOAuthErrorBody(
  code: OAuthErrorCode,
  description: string,
  details?: Readonly<Record<string, unknown>>,
): OAuthErrorBody {
  const registration = details?.oauthError;
  const error =
    registration === OAUTH_REGISTRATION_ERRORS.INVALID_CLIENT_METADATA ||
    registration === OAUTH_REGISTRATION_ERRORS.INVALID_REDIRECT_URI
      ? registration
      : OAUTH_ERROR_STRINGS[code];
  const issues = details?.issues as readonly FieldIssue[] | undefined;
  const docs = details?.docs as string | undefined;
  return {
    error,
    error_description: description,
    ...(issues === undefined ? {} : { issues }),
    ...(docs === undefined ? {} : { docs }),
  };
}

/** JSON Schema of OAuthErrorBody, for route response schemas (and so for OpenAPI). */
export const oauthErrorBodySchema = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    error_description: { type: 'string' },
    issues: {
      type: 'array',
      items: fieldIssueSchema,
      description: 'Registration refusals: every wrong field of the metadata.',
    },
    docs: { type: 'string', description: 'The documentation page of the request.' },
    reasonCode: {
      type: 'string',
      description:
        'A client ID metadata document refusal: which one (CIMD_*, the error registry), beside the RFC error invalid_client.',
    },
  },
  required: ['error'],
  additionalProperties: false,
} as const;
