// OAuth endpoints answer errors as RFC 6749 §5.2 bodies `{ error, error_description }` (no
// reasonCode: off-the-shelf OAuth clients read `error`), with Cache-Control: no-store, and
// invalid_client as 401 with WWW-Authenticate (RFC 6749 §5.2). The registry (shared/errors) still
// decides each code's status; shared/oauth/errors.ts gives each OAUTH_* code its RFC string.
import type { FastifyReply } from 'fastify';
import type { ErrorCode, GatewayError } from '../../shared/errors/index.js';
import { OAUTH_ERROR_STRINGS } from '../../shared/oauth/errors.js';

const RFC_ERRORS: Partial<Record<ErrorCode, string>> = {
  ...OAUTH_ERROR_STRINGS,
  // The edge's own refusals (body too large, wrong media type, not JSON) are malformed requests.
  REQUEST_INVALID: 'invalid_request',
  REQUEST_TOO_LARGE: 'invalid_request',
  REQUEST_UNSUPPORTED_MEDIA_TYPE: 'invalid_request',
  // A process without a token signing key cannot issue.
  MCP_OAUTH_UNAVAILABLE: 'temporarily_unavailable',
  // A client ID metadata document that cannot be used: the client is not one the server accepts.
  CIMD_URL_INVALID: 'invalid_client',
  CIMD_NOT_HTTPS: 'invalid_client',
  CIMD_ADDRESS_FORBIDDEN: 'invalid_client',
  CIMD_REDIRECT_REFUSED: 'invalid_client',
  CIMD_DOCUMENT_TOO_LARGE: 'invalid_client',
  CIMD_FETCH_TIMEOUT: 'invalid_client',
  CIMD_FETCH_FAILED: 'invalid_client',
  CIMD_DOCUMENT_INVALID: 'invalid_client',
};

export const WWW_AUTHENTICATE = 'Basic realm="agent-gateway"';

/** The RFC 6749 `error` string of a registry code (`server_error` for anything unexpected). */
export function rfcErrorOf(code: ErrorCode): string {
  return RFC_ERRORS[code] ?? 'server_error';
}

export function sendOAuthError(reply: FastifyReply, error: GatewayError): FastifyReply {
  const rfc = RFC_ERRORS[error.code];
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  if (error.code === 'OAUTH_INVALID_CLIENT') reply.header('www-authenticate', WWW_AUTHENTICATE);
  if (error.code === 'OAUTH_RATE_LIMITED') {
    const retryAfter = (error.details as { retryAfterSeconds?: number } | undefined)
      ?.retryAfterSeconds;
    if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  }
  return reply.code(rfc ? (error.status ?? 400) : 500).send({
    error: rfc ?? 'server_error',
    // An unexpected error says nothing of its cause.
    error_description: rfc ? error.message : 'the authorization server failed',
    // A client ID metadata document's refusals are many for one RFC string: the gateway's code
    // says which (an extension member, as RFC 6749 §5.2 allows).
    ...(error.code.startsWith('CIMD_') ? { reasonCode: error.code } : {}),
  });
}
