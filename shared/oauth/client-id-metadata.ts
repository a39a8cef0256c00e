// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, as MCP's
// authorization of 2025-11-25 uses them): a client whose client_id is an https URL serving its
// metadata as JSON, instead of a registration. What the authorization server checks, pure:
// - the URL (clientIdUrlProblem): https, a path other than "/", no fragment, no user or password,
//   no "." or ".." path segments (a query is allowed);
// - the document (checkMetadataDocument): a JSON object whose client_id is the URL exactly, with
//   redirect_uris (absolute URLs), no client secret, a token_endpoint_auth_method of `none` (the
//   default: PKCE and the agent's identity proof at the authorization endpoint bind its code) or
//   `private_key_jwt` with its keys (`jwks_uri`, https, or `jwks` inline), and grant_types, when
//   given, naming authorization_code (client_credentials is not offered to these clients);
// - how long a fetched document may be used (freshnessMs): its Cache-Control max-age, else its
//   Expires, at most 24 hours; no-store, no-cache or neither header: not kept.
import { isRecord } from '../json/is-record.js';

/** The largest document read; nothing beyond it is. */
export const MAX_METADATA_DOCUMENT_BYTES = 5 * 1024;
/** The longest a fetched document is used. */
export const MAX_METADATA_DOCUMENT_AGE_MS = 24 * 60 * 60 * 1000;

/** True when `clientId` is a URL (http or https): a metadata document client, not a registered one. */
export function isMetadataDocumentClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

export type ClientIdUrlCheck =
  | { readonly ok: true; readonly url: URL }
  | {
      readonly ok: false;
      readonly code: 'CIMD_NOT_HTTPS' | 'CIMD_URL_INVALID';
      readonly problem: string;
    };

/** The URL a client_id names, when it may be a metadata document's. */
export function checkClientIdUrl(clientId: string): ClientIdUrlCheck {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return { ok: false, code: 'CIMD_URL_INVALID', problem: 'it is not a URL' };
  }
  if (url.protocol !== 'https:') {
    return { ok: false, code: 'CIMD_NOT_HTTPS', problem: 'it is not https' };
  }
  const problem = clientIdUrlProblem(clientId, url);
  return problem === undefined
    ? { ok: true, url }
    : { ok: false, code: 'CIMD_URL_INVALID', problem };
}

function clientIdUrlProblem(text: string, url: URL): string | undefined {
  if (text.includes('#')) return 'it has a fragment';
  if (url.username !== '' || url.password !== '') return 'it has a user name or password';
  // The parsed URL has already resolved dot segments away: read them in the text as written.
  const path = text.replace(/^https:\/\/[^/?#]*/i, '').split(/[?#]/)[0] ?? '';
  if (path === '' || path === '/') return 'it has no path';
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) {
    return 'it has a "." or ".." path segment';
  }
  return undefined;
}

/** What the gateway keeps of a valid document. */
export interface ClientMetadataDocument {
  readonly clientId: string;
  readonly clientName: string | undefined;
  readonly redirectUris: readonly string[];
  readonly authMethod: 'none' | 'private_key_jwt';
  /** private_key_jwt: where its keys are (fetched under the same profile)… */
  readonly jwksUri?: string;
  /** …or the keys themselves. */
  readonly jwks?: { readonly keys: readonly Record<string, unknown>[] };
}

export type MetadataDocumentCheck =
  | { readonly ok: true; readonly document: ClientMetadataDocument }
  | { readonly ok: false; readonly problem: string };

/** Checks a parsed document against the URL it was fetched from. */
export function checkMetadataDocument(document: unknown, url: string): MetadataDocumentCheck {
  const refuse = (problem: string): MetadataDocumentCheck => ({ ok: false, problem });
  if (!isRecord(document)) return refuse('it is not a JSON object');
  if (document.client_id !== url) {
    return refuse('its client_id is not the URL it is served at, exactly');
  }
  for (const secret of ['client_secret', 'client_secret_expires_at']) {
    if (secret in document) return refuse(`it has ${secret} (a document is public)`);
  }
  const method = document.token_endpoint_auth_method ?? 'none';
  if (method !== 'none' && method !== 'private_key_jwt') {
    return refuse(
      `token_endpoint_auth_method ${JSON.stringify(method).slice(0, 40)} is not supported; use none or private_key_jwt`,
    );
  }
  const keys = keysOf(document);
  if (typeof keys === 'string') return refuse(keys);
  if (method === 'private_key_jwt' && keys === undefined) {
    return refuse('private_key_jwt needs jwks_uri (https) or jwks');
  }
  const grants = document.grant_types;
  if (grants !== undefined) {
    if (!Array.isArray(grants) || !grants.every((grant) => typeof grant === 'string')) {
      return refuse('grant_types is not an array of strings');
    }
    if (!grants.includes('authorization_code')) {
      return refuse('grant_types does not name authorization_code, the one grant offered');
    }
  }
  const uris = document.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) {
    return refuse('redirect_uris is missing or empty');
  }
  for (const uri of uris) {
    if (typeof uri !== 'string' || !isAbsoluteUrl(uri) || uri.includes('#')) {
      return refuse('redirect_uris holds something that is not an absolute URL without fragment');
    }
  }
  const name = document.client_name;
  if (name !== undefined && typeof name !== 'string') return refuse('client_name is not a string');
  return {
    ok: true,
    document: {
      clientId: url,
      clientName: typeof name === 'string' ? name.slice(0, 200) : undefined,
      redirectUris: uris as string[],
      authMethod: method,
      ...(method === 'private_key_jwt' ? keys : {}),
    },
  };
}

/** The document's keys: `jwks_uri` or `jwks`, a problem, or undefined for none. */
function keysOf(
  document: Readonly<Record<string, unknown>>,
):
  | { jwksUri: string }
  | { jwks: { keys: readonly Record<string, unknown>[] } }
  | string
  | undefined {
  const { jwks_uri: uri, jwks } = document;
  if (uri !== undefined && jwks !== undefined) return 'it has both jwks_uri and jwks';
  if (uri !== undefined) {
    if (typeof uri !== 'string' || !/^https:\/\//.test(uri) || !isAbsoluteUrl(uri)) {
      return 'jwks_uri is not an https URL';
    }
    return { jwksUri: uri };
  }
  if (jwks !== undefined) {
    const list = isRecord(jwks) ? jwks.keys : undefined;
    if (!Array.isArray(list) || list.length === 0 || !list.every(isRecord)) {
      return 'jwks is not a JWK set with keys';
    }
    return { jwks: { keys: list } };
  }
  return undefined;
}

function isAbsoluteUrl(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

/** How long a document fetched at `now` may be used, from its caching headers (0: not kept). */
export function freshnessMs(
  headers: { readonly cacheControl?: string; readonly expires?: string; readonly date?: string },
  now: number,
): number {
  const directives = (headers.cacheControl ?? '')
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  const maxAge = directives.find((d) => d.startsWith('max-age='));
  if (maxAge !== undefined) {
    const seconds = Number(maxAge.slice('max-age='.length));
    return Number.isFinite(seconds) && seconds > 0
      ? Math.min(seconds * 1000, MAX_METADATA_DOCUMENT_AGE_MS)
      : 0;
  }
  if (headers.expires !== undefined) {
    const expires = Date.parse(headers.expires);
    const served = headers.date === undefined ? now : Date.parse(headers.date);
    if (Number.isNaN(expires) || Number.isNaN(served)) return 0;
    return Math.max(0, Math.min(expires - served, MAX_METADATA_DOCUMENT_AGE_MS));
  }
  return 0;
}
