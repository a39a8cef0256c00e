// The resource-server side of Agent Gateway's OAuth: what an upstream MCP server puts in front of
// its tools to trust the access tokens the gateway sends it.
//
// Under `oauthMode: mcp_as` the gateway forwards every allowed call with `Authorization: Bearer
// <token>`: a JWT access token (RFC 9068) minted for exactly one server (its RFC 8707 `resource`,
// `mcp://{serverId}` or `<issuer>/mcp/{serverId}`) and valid for minutes. A token opens this server
// only when all of these hold:
//   - its header `alg` is EdDSA: `none`, HS256 "signed" with the public key and every other
//     algorithm are refused before any key is looked up (RFC 8725 §3.1);
//   - it is signed by a key of the issuer's JWKS (`<issuer>/oauth/jwks`, fetched by jose, cached
//     per issuer, fetched again when an unknown `kid` shows up after the cooldown);
//   - its header `typ` is `at+jwt` (RFC 9068 §4: an access token, not an ID token or another JWT);
//   - `iss` is the issuer exactly, and `aud` names this server's resource and nothing else (RFC
//     8707 §2, RFC 9068 §4: a token for server A must not open server B, and a token for several
//     audiences is refused rather than shared);
//   - `exp` is in the future (within the clock tolerance), and `sub`, `client_id`, `iat`, `jti`
//     are present (RFC 9068 §2.2);
//   - its signature is spelt canonically: on Node 20 jose decodes base64url with `atob`, which
//     ignores the unused low bits of the last character, so one signature has four spellings;
//     only the canonical one is accepted, so one token has one string (replay caches, logs).
// Anything else throws GatewayTokenError with a stable `code`; messages say as little as the
// failure allows, the jose error stays in `cause` for the server's own logs.
import {
  createRemoteJWKSet,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  jwtVerify,
} from 'jose';

export const GATEWAY_TOKEN_ERROR_CODES = [
  'TOKEN_MISSING',
  'TOKEN_MALFORMED',
  'TOKEN_ALGORITHM_REFUSED',
  'TOKEN_SIGNATURE_INVALID',
  'TOKEN_EXPIRED',
  'TOKEN_NOT_YET_VALID',
  'TOKEN_WRONG_AUDIENCE',
  'TOKEN_WRONG_ISSUER',
  'TOKEN_WRONG_TYPE',
  'JWKS_UNREACHABLE',
] as const;

export type GatewayTokenErrorCode = (typeof GATEWAY_TOKEN_ERROR_CODES)[number];

/**
 * Why a token was refused. `status` is the HTTP status a resource server should answer with: 401
 * for every token problem (with `bearerChallenge(error)` as `WWW-Authenticate`), 503 when the
 * issuer's keys could not be fetched (the token may be fine; the client should retry later).
 */
export class GatewayTokenError extends Error {
  override readonly name = 'GatewayTokenError';
  readonly code: GatewayTokenErrorCode;
  readonly status: 401 | 503;

  constructor(code: GatewayTokenErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = code === 'JWKS_UNREACHABLE' ? 503 : 401;
  }
}

/** The claims of a verified gateway access token (RFC 9068 §2.2). */
export interface GatewayAccessTokenClaims {
  /** The issuer: the gateway's public URL. */
  readonly iss: string;
  /** The agent the gateway acts for (its agent id). */
  readonly sub: string;
  /** The one resource the token was minted for: this server's resource identifier. */
  readonly aud: string;
  /** The OAuth client that obtained the token; `gateway` for tokens minted for forwards. */
  readonly client_id: string;
  readonly iat: number;
  readonly exp: number;
  /** Unique token id (a UUID): what revocation and replay caches key on. */
  readonly jti: string;
  /** Space-separated scopes; "" when none were granted. */
  readonly scope: string;
  /** The gateway tenant the agent belongs to. */
  readonly tenant_id: string | undefined;
}

export interface VerifyGatewayAccessTokenOptions {
  /** The gateway's public URL, exactly as it appears in `iss` (no trailing slash). */
  readonly issuer: string;
  /** This server's resource identifier (`mcp://{serverId}` or its URL), compared exactly to `aud`. */
  readonly resource: string;
  /**
   * Where the keys come from. Default: `<issuer>/oauth/jwks`, fetched and cached by jose. A URL
   * fetches another JWKS; a function (e.g. jose's `createLocalJWKSet`) is used as it is.
   */
  readonly jwks?: URL | JWTVerifyGetKey;
  /** Allowed clock skew for `exp` and `nbf`, in seconds. Default 30. */
  readonly clockToleranceSeconds?: number;
}

const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;
// A gateway token is a few hundred bytes; a bound keeps garbage from costing a parse.
const MAX_TOKEN_LENGTH = 8192;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
// 64 signature bytes = 85 full base64url characters and one holding the last 2 bits (4 zero bits).
const CANONICAL_ED25519_SIGNATURE = /^[A-Za-z0-9_-]{85}[AQgw]$/;
// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token.
const BEARER_CREDENTIALS = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

const remoteKeySets = new Map<string, JWTVerifyGetKey>();

function remoteKeySet(url: URL): JWTVerifyGetKey {
  let keySet = remoteKeySets.get(url.href);
  if (keySet === undefined) {
    keySet = createRemoteJWKSet(url);
    remoteKeySets.set(url.href, keySet);
  }
  return keySet;
}

/** The JWKS URL of an issuer: `<issuer>/oauth/jwks`. */
export function gatewayJwksUrl(issuer: string): URL {
  return new URL(`${issuer.endsWith('/') ? issuer.slice(0, -1) : issuer}/oauth/jwks`);
}

// The key lookup, with fetch failures told apart from key-selection failures: an unknown `kid` is
// the token's fault (TOKEN_SIGNATURE_INVALID), an unreachable or broken JWKS is not.
function keyLookup(jwks: URL | JWTVerifyGetKey | undefined, issuer: string): JWTVerifyGetKey {
  const keySet = typeof jwks === 'function' ? jwks : remoteKeySet(jwks ?? gatewayJwksUrl(issuer));
  return async (header, token) => {
    try {
      return await keySet(header, token);
    } catch (error) {
      if (
        error instanceof errors.JWKSNoMatchingKey ||
        error instanceof errors.JWKSMultipleMatchingKeys
      ) {
        throw error;
      }
      throw new GatewayTokenError('JWKS_UNREACHABLE', 'the issuer keys could not be fetched', {
        cause: error,
      });
    }
  };
}

function refusal(error: unknown): GatewayTokenError {
  if (error instanceof GatewayTokenError) return error;
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new GatewayTokenError('TOKEN_ALGORITHM_REFUSED', 'algorithm not allowed', {
      cause: error,
    });
  }
  if (error instanceof errors.JWTExpired) {
    return new GatewayTokenError('TOKEN_EXPIRED', 'token expired', { cause: error });
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') {
      return new GatewayTokenError('TOKEN_MALFORMED', `missing "${error.claim}" claim`, {
        cause: error,
      });
    }
    switch (error.claim) {
      case 'typ':
        return new GatewayTokenError('TOKEN_WRONG_TYPE', 'not an access token (typ)', {
          cause: error,
        });
      case 'iss':
        return new GatewayTokenError('TOKEN_WRONG_ISSUER', 'unexpected issuer', { cause: error });
      case 'aud':
        return new GatewayTokenError('TOKEN_WRONG_AUDIENCE', 'token not issued for this resource', {
          cause: error,
        });
      case 'nbf':
        return new GatewayTokenError('TOKEN_NOT_YET_VALID', 'token not yet valid', {
          cause: error,
        });
      default:
        return new GatewayTokenError('TOKEN_MALFORMED', `invalid "${error.claim}" claim`, {
          cause: error,
        });
    }
  }
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  ) {
    return new GatewayTokenError('TOKEN_MALFORMED', 'malformed token', { cause: error });
  }
  // JWSSignatureVerificationFailed, JWKSNoMatchingKey, and anything unforeseen: fail closed.
  return new GatewayTokenError('TOKEN_SIGNATURE_INVALID', 'signature verification failed', {
    cause: error,
  });
}

function malformed(message: string): GatewayTokenError {
  return new GatewayTokenError('TOKEN_MALFORMED', message);
}

function optionalString(payload: JWTPayload, claim: string): string | undefined {
  const value = payload[claim];
  if (value === undefined || typeof value === 'string') return value;
  throw malformed(`invalid "${claim}" claim`);
}

function requiredString(payload: JWTPayload, claim: string): string {
  const value = payload[claim];
  if (typeof value === 'string' && value !== '') return value;
  throw malformed(`invalid "${claim}" claim`);
}

function singleAudience(aud: JWTPayload['aud']): string | undefined {
  if (typeof aud === 'string') return aud;
  return Array.isArray(aud) && aud.length === 1 ? aud[0] : undefined;
}

type TokenVerifier = (token: string | undefined) => Promise<GatewayAccessTokenClaims>;

// Options are checked and turned into jose's once (a guard compiles at startup, not per request);
// a mistake in them is the caller's bug (TypeError), never a token refusal.
function compileVerifier(options: VerifyGatewayAccessTokenOptions): TokenVerifier {
  const { issuer, resource, clockToleranceSeconds = DEFAULT_CLOCK_TOLERANCE_SECONDS } = options;
  if (typeof issuer !== 'string' || issuer === '') throw new TypeError('issuer is required');
  if (typeof resource !== 'string' || resource === '') throw new TypeError('resource is required');
  if (!Number.isFinite(clockToleranceSeconds) || clockToleranceSeconds < 0) {
    throw new TypeError('clockToleranceSeconds must be a non-negative number');
  }
  const keys = keyLookup(options.jwks, issuer);
  const joseOptions: JWTVerifyOptions = {
    algorithms: ['EdDSA'],
    typ: 'at+jwt',
    issuer,
    audience: resource,
    requiredClaims: ['sub', 'client_id', 'iat', 'exp', 'jti'],
    clockTolerance: clockToleranceSeconds,
  };

  return async (token) => {
    if (typeof token !== 'string' || token === '') {
      throw new GatewayTokenError('TOKEN_MISSING', 'no access token');
    }
    if (token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) {
      throw malformed('malformed token');
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, joseOptions));
    } catch (error) {
      throw refusal(error);
    }
    if (!CANONICAL_ED25519_SIGNATURE.test(token.slice(token.lastIndexOf('.') + 1))) {
      throw new GatewayTokenError('TOKEN_SIGNATURE_INVALID', 'signature verification failed');
    }
    // jose accepts `aud` when it merely contains the resource; this server wants it alone.
    if (singleAudience(payload.aud) !== resource) {
      throw new GatewayTokenError(
        'TOKEN_WRONG_AUDIENCE',
        'token not issued for this resource only',
      );
    }
    return {
      iss: issuer,
      sub: requiredString(payload, 'sub'),
      aud: resource,
      client_id: requiredString(payload, 'client_id'),
      iat: payload.iat as number,
      exp: payload.exp as number,
      jti: requiredString(payload, 'jti'),
      scope: optionalString(payload, 'scope') ?? '',
      tenant_id: optionalString(payload, 'tenant_id'),
    };
  };
}

/**
 * Verifies a gateway access token for this resource server and returns its claims; throws
 * GatewayTokenError otherwise (see the module comment for every check), TypeError for bad options.
 */
export async function verifyGatewayAccessToken(
  token: string | undefined,
  options: VerifyGatewayAccessTokenOptions,
): Promise<GatewayAccessTokenClaims> {
  return compileVerifier(options)(token);
}

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1). Throws TOKEN_MISSING
 * when there is no header or it carries another scheme, TOKEN_MALFORMED when the credentials are
 * not a single b64token.
 */
export function bearerToken(authorization: string | readonly string[] | undefined): string {
  if (authorization === undefined || authorization === '') {
    throw new GatewayTokenError('TOKEN_MISSING', 'no bearer token');
  }
  if (typeof authorization !== 'string') throw malformed('more than one Authorization header');
  const match = BEARER_CREDENTIALS.exec(authorization);
  if (match?.[1] !== undefined) return match[1];
  if (/^Bearer( |$)/i.test(authorization)) throw malformed('malformed bearer credentials');
  throw new GatewayTokenError('TOKEN_MISSING', 'no bearer token');
}

/**
 * The `WWW-Authenticate` value for a refused request (RFC 6750 §3), naming this server's
 * protected-resource metadata (RFC 9728 §5.1) so a client can find the authorization server.
 * A missing token gets no `error` attribute, as RFC 6750 §3.1 asks.
 */
export function bearerChallenge(
  error: GatewayTokenError,
  options: { readonly resourceMetadata?: string } = {},
): string {
  const attributes: string[] = [];
  if (error.code !== 'TOKEN_MISSING' && error.code !== 'JWKS_UNREACHABLE') {
    attributes.push('error="invalid_token"', `error_description="${error.message}"`);
  }
  if (options.resourceMetadata !== undefined) {
    attributes.push(`resource_metadata="${options.resourceMetadata}"`);
  }
  return attributes.length === 0 ? 'Bearer' : `Bearer ${attributes.join(', ')}`;
}

/**
 * The shape of the MCP SDK's `AuthInfo` (`@modelcontextprotocol/sdk/server/auth/types.js`): the
 * Streamable HTTP transport reads it from `req.auth` and hands it to tool handlers as
 * `extra.authInfo`. Declared here so this package does not depend on the SDK.
 */
export interface McpAuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  resource?: URL;
  extra?: Record<string, unknown>;
}

/** What the adapter needs of a request: a Node `IncomingMessage` fits. */
export interface BearerRequest {
  readonly headers: { readonly authorization?: string | readonly string[] | undefined };
  auth?: McpAuthInfo;
}

/**
 * A request guard for an MCP server on node:http: `await guard(req)` verifies the request's
 * bearer token, sets `req.auth` for the SDK's transport and returns the claims, or throws
 * GatewayTokenError (answer `error.status` with `bearerChallenge(error)`).
 */
export function requireGatewayToken(
  options: VerifyGatewayAccessTokenOptions,
): (req: BearerRequest) => Promise<GatewayAccessTokenClaims> {
  const verify = compileVerifier(options);
  const resourceUrl = URL.canParse(options.resource) ? new URL(options.resource) : undefined;
  return async (req) => {
    const token = bearerToken(req.headers.authorization);
    const claims = await verify(token);
    req.auth = {
      token,
      clientId: claims.client_id,
      scopes: claims.scope === '' ? [] : claims.scope.split(' '),
      expiresAt: claims.exp,
      ...(resourceUrl === undefined ? {} : { resource: resourceUrl }),
      extra: { sub: claims.sub, jti: claims.jti, tenantId: claims.tenant_id },
    };
    return claims;
  };
}
