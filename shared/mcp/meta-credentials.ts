// Finds a credential in an MCP message's `_meta` (spec §5.4: an agent never hands the gateway a
// token to pass on to the MCP server). `_meta` is the one place of a message MCP leaves open to
// any JSON, so a token can hide anywhere in it: nested (`_meta.headers.authorization`), in an
// array, under a vendor prefix (`com.example/authorization`). The whole value is walked, without
// recursion, and a credential is found by its name or by its shape:
// - names, case-insensitive with `-` and `_` ignored, compared after the last `/` (MCP's
//   reverse-DNS key prefix): authorization, proxy-authorization, auth, cookie, set-cookie, token,
//   access_token, id_token, refresh_token, bearer, bearer_token, api_key, x-api-key, secret,
//   client_secret, password, credentials. Never by name: `progressToken` and every key under
//   `io.modelcontextprotocol/`, which MCP itself defines (their values are still scanned);
// - values (every string, keys exempt or not): a `Bearer ` or `Basic ` scheme prefix, a
//   three-segment base64url JWT whose header begins `eyJ`, this gateway's `agk_` API keys.
// Fail closed: a `_meta` deeper or larger than META_SCAN_LIMITS is refused as unscannable rather
// than passed half-read. A finding names the path of the credential, never its value.
// Pure: no I/O. The common `_meta` ({progressToken: 7}) costs a few comparisons.

export const META_SCAN_LIMITS = Object.freeze({
  /** Containers nested, `_meta` itself being depth 1. */
  maxDepth: 16,
  /** Values visited (containers and leaves, `_meta` included). */
  maxNodes: 1_000,
});

export type MetaFinding =
  /** A credential-shaped name or value at `path`. */
  | { readonly kind: 'credential'; readonly path: string }
  /** `_meta` is deeper or larger than META_SCAN_LIMITS: not scanned to its end. */
  | { readonly kind: 'too-large'; readonly path: string };

const CREDENTIAL_NAMES = [
  'authorization',
  'proxyauthorization',
  'auth',
  'cookie',
  'setcookie',
  'token',
  'accesstoken',
  'idtoken',
  'refreshtoken',
  'bearer',
  'bearertoken',
  'apikey',
  'xapikey',
  'secret',
  'clientsecret',
  'password',
  'credentials',
];
// One sticky, case-insensitive regex with `-` and `_` allowed around every letter, run from the
// name's start: no lower-cased or stripped copy of every key (that copy was most of the scan's
// cost, about 250 ns a key).
const CREDENTIAL_NAME = new RegExp(
  `[-_]*(?:${CREDENTIAL_NAMES.map((name) => [...name].join('[-_]*')).join('|')})[-_]*$`,
  'iy',
);
const MCP_PREFIX = 'io.modelcontextprotocol/';

const SCHEME_PREFIX = /^\s*(?:bearer|basic)\s+\S/i;
// The lookbehind keeps the search linear: a candidate starts only after a character outside the
// base64url alphabet, so no two candidates scan the same run.
const JWT = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/;
// shared/identity/api-keys.ts: agk_<12 lowercase letters or digits>_<43 base64url>.
const API_KEY = /agk_[a-z0-9]{12}_[A-Za-z0-9_-]{43}/;

/** True when a `_meta` key names a credential (see the module comment for the list). */
export function isCredentialName(key: string): boolean {
  if (key === 'progressToken' || key.startsWith(MCP_PREFIX)) return false;
  CREDENTIAL_NAME.lastIndex = key.lastIndexOf('/') + 1;
  return CREDENTIAL_NAME.test(key);
}

/** True when a string looks like a credential: a scheme prefix, a JWT or a gateway API key. */
export function isCredentialValue(value: string): boolean {
  return SCHEME_PREFIX.test(value) || JWT.test(value) || API_KEY.test(value);
}

/**
 * The first credential found in `meta`, or a refusal to scan it to its end; null when it is
 * clean. `root` names `meta` in the finding's path (e.g. `request.params._meta`).
 */
export function findMetaCredential(
  meta: unknown,
  root: string,
  limits: { readonly maxDepth: number; readonly maxNodes: number } = META_SCAN_LIMITS,
): MetaFinding | null {
  if (typeof meta === 'string') {
    return isCredentialValue(meta) ? { kind: 'credential', path: root } : null;
  }
  if (typeof meta !== 'object' || meta === null) return null;
  // Containers seen so far, as parallel arrays: a finding's path is rebuilt from the parent
  // links only when there is one, so a clean scan builds no strings.
  const containers: object[] = [meta];
  const parents: number[] = [-1];
  const keys: (string | number)[] = [''];
  const depths: number[] = [1];
  const pending: number[] = [0];
  let nodes = 1;
  while (pending.length > 0) {
    const index = pending.pop() as number;
    const container = containers[index] as Record<string, unknown> | unknown[];
    const depth = depths[index] as number;
    if (Array.isArray(container)) {
      nodes += container.length;
      if (nodes > limits.maxNodes) return { kind: 'too-large', path: root };
      for (let i = 0; i < container.length; i++) {
        const value = container[i];
        if (typeof value === 'string') {
          if (isCredentialValue(value)) return credentialAt(root, parents, keys, index, i);
        } else if (typeof value === 'object' && value !== null) {
          if (depth >= limits.maxDepth) return { kind: 'too-large', path: root };
          pending.push(containers.length);
          containers.push(value);
          parents.push(index);
          keys.push(i);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key in container) {
      if (!Object.hasOwn(container, key)) continue;
      if (++nodes > limits.maxNodes) return { kind: 'too-large', path: root };
      if (isCredentialName(key)) return credentialAt(root, parents, keys, index, key);
      const value = container[key];
      if (typeof value === 'string') {
        if (isCredentialValue(value)) return credentialAt(root, parents, keys, index, key);
      } else if (typeof value === 'object' && value !== null) {
        if (depth >= limits.maxDepth) return { kind: 'too-large', path: root };
        pending.push(containers.length);
        containers.push(value);
        parents.push(index);
        keys.push(key);
        depths.push(depth + 1);
      }
    }
  }
  return null;
}

/** The finding for `key` of container `index`, its path rebuilt through the parent links. */
function credentialAt(
  root: string,
  parents: readonly number[],
  keys: readonly (string | number)[],
  index: number,
  key: string | number,
): MetaFinding {
  let path = segment(key);
  for (let at = index; at > 0; at = parents[at] as number) {
    path = segment(keys[at] as string | number) + path;
  }
  return { kind: 'credential', path: root + path };
}

const PLAIN_KEY = /^[A-Za-z0-9_-]{1,64}$/;
const QUOTABLE_KEY = /^[\x20-\x7e]{1,64}$/;

/**
 * One step of a path. A key that is long, unprintable or itself credential-shaped is not
 * repeated (`[…]`): the path is shown to the caller and written to the audit trail.
 */
function segment(key: string | number): string {
  if (typeof key === 'number') return `[${key}]`;
  if (PLAIN_KEY.test(key) && !isCredentialValue(key)) return `.${key}`;
  if (QUOTABLE_KEY.test(key) && !isCredentialValue(key)) return `[${JSON.stringify(key)}]`;
  return '[…]';
}
