// The closed set of errors a forward to an upstream MCP server can end in: GatewayErrors with the
// MCP_UPSTREAM_* codes and UPSTREAM_ADDRESS_FORBIDDEN, so their statuses (504 for TIMEOUT, 502 for
// ERROR and FORBIDDEN, 409 for ABORTED) and wording come from the registry (DESIGN.md §4).
// ABORTED means the caller's signal fired (the kill switch); FORBIDDEN that the egress policy
// refused the address a connection was about to be opened to (egress-connector.ts). `detail` is
// short and never carries secrets or response bodies: it is safe to log and to show to the
// agent. UpstreamError is a subclass, unlike StorageError, because it carries the detail and the
// upstream's HTTP status beside the code; only the builders below construct it.
import {
  type ErrorCode,
  type ErrorParams,
  formatErrorMessage,
  GatewayError,
} from '../../shared/errors/index.js';

export const UPSTREAM_ERROR_CODES = {
  TIMEOUT: 'MCP_UPSTREAM_TIMEOUT',
  ERROR: 'MCP_UPSTREAM_ERROR',
  ABORTED: 'MCP_UPSTREAM_ABORTED',
  FORBIDDEN: 'UPSTREAM_ADDRESS_FORBIDDEN',
} as const satisfies Record<string, ErrorCode>;

export type UpstreamErrorCode = (typeof UPSTREAM_ERROR_CODES)[keyof typeof UPSTREAM_ERROR_CODES];

export class UpstreamError extends GatewayError<UpstreamErrorCode> {
  /** A short description of the failure: safe to log and to return. */
  readonly detail: string;
  /** The upstream's HTTP status when one was received. */
  readonly httpStatus: number | undefined;

  constructor(
    code: UpstreamErrorCode,
    params: ErrorParams<UpstreamErrorCode>,
    options?: { httpStatus?: number | undefined; cause?: unknown },
  ) {
    super(
      code,
      formatErrorMessage(code, params),
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'UpstreamError';
    this.detail = String(params.detail);
    this.httpStatus = options?.httpStatus;
  }
}

export function upstreamTimeout(detail: string, httpStatus?: number): UpstreamError {
  return new UpstreamError(UPSTREAM_ERROR_CODES.TIMEOUT, { detail }, { httpStatus });
}

export function upstreamFailure(
  detail: string,
  httpStatus?: number,
  cause?: unknown,
): UpstreamError {
  return new UpstreamError(UPSTREAM_ERROR_CODES.ERROR, { detail }, { httpStatus, cause });
}

/** The egress policy refused the address a connection was about to be opened to. */
export function upstreamForbidden(detail: string): UpstreamError {
  return new UpstreamError(UPSTREAM_ERROR_CODES.FORBIDDEN, { detail });
}

export function upstreamAborted(): UpstreamError {
  return new UpstreamError(UPSTREAM_ERROR_CODES.ABORTED, { detail: 'the forward was aborted' });
}

const NETWORK_DETAILS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNABORTED: 'connection aborted',
  UND_ERR_SOCKET: 'connection closed by the upstream',
  UND_ERR_CLOSED: 'connection pool closed',
  UND_ERR_DESTROYED: 'connection pool destroyed',
};

/** Maps an error raised by undici or the socket layer to an UpstreamError. */
export function fromTransportError(error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return upstreamTimeout('connect timeout');
    case 'UND_ERR_HEADERS_TIMEOUT':
      return upstreamTimeout('no response headers within the read timeout');
    case 'UND_ERR_BODY_TIMEOUT':
      return upstreamTimeout('response body stalled beyond the read timeout');
  }
  const known = typeof code === 'string' ? NETWORK_DETAILS[code] : undefined;
  if (known) return upstreamFailure(known, undefined, error);
  const label = typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? code : 'unknown';
  return upstreamFailure(`transport failure (${label})`, undefined, error);
}
