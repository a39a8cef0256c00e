// The parameters of an OAuth request: `application/x-www-form-urlencoded` as RFC 6749 requires
// (every value a string, a name may repeat), or a JSON object (a value is a string or an array of
// strings). Both become one shape, name → values, so the endpoints can tell a missing parameter
// from a repeated one (RFC 6749 §3.2: parameters must not be repeated; RFC 8707 §2: `resource`
// may be, and more than one is refused as invalid_target here).
import { gatewayError } from '../../shared/errors/index.js';

export type OAuthParams = ReadonlyMap<string, readonly string[]>;

export function parseFormParams(body: string): OAuthParams {
  const params = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(body)) {
    const values = params.get(name);
    if (values) values.push(value);
    else params.set(name, [value]);
  }
  return params;
}

export function toOAuthParams(body: unknown): OAuthParams {
  if (body instanceof Map) return body as OAuthParams;
  if (body === undefined || body === null) return new Map();
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw gatewayError('OAUTH_INVALID_REQUEST', {
      problem: 'the request body must be form parameters or a JSON object',
    });
  }
  const params = new Map<string, string[]>();
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string') params.set(name, [value]);
    else if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
      params.set(name, value as string[]);
    } else {
      throw gatewayError('OAUTH_INVALID_REQUEST', { problem: `${name} must be a string` });
    }
  }
  return params;
}

/** The one value of an optional parameter; invalid_request when it is repeated. */
export function optionalParam(params: OAuthParams, name: string): string | undefined {
  const values = params.get(name);
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > 1) {
    throw gatewayError('OAUTH_INVALID_REQUEST', { problem: `${name} is repeated` });
  }
  return values[0];
}

/** The one value of a required parameter; invalid_request when it is missing or repeated. */
export function requiredParam(params: OAuthParams, name: string): string {
  const value = optionalParam(params, name);
  if (value === undefined || value === '') {
    throw gatewayError('OAUTH_INVALID_REQUEST', { problem: `${name} is required` });
  }
  return value;
}
