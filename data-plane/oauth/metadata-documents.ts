// Fetching client ID metadata documents (shared/oauth/client-id-metadata.ts), under a strict
// egress profile: the fetch is triggered by whoever calls /oauth/authorize, before anyone is
// authenticated, so it is what an attacker would use to make the gateway reach inside its network.
// On top of the gateway's egress policy (AGENT_GATEWAY_EGRESS_ALLOW/_DENY, shared/egress):
// - public addresses only: loopback, RFC 1918, ULA, CGNAT and link-local are refused unless
//   AGENT_GATEWAY_CIMD_ALLOW_PRIVATE=true (the never-list, such as cloud metadata, stays refused);
// - the host is resolved once, every address is checked, and the connection goes to a checked
//   address (the socket's lookup answers only those): no second resolution can bring another;
// - https only (the TLS certificate verified for the host name), no redirects (a 3xx is refused),
//   5 seconds for the whole exchange, 5 KiB at most (the body is read no further);
// - a document is kept as its Cache-Control max-age or Expires say, at most 24 hours; one fetch
//   per URL at a time (concurrent authorizations share it).
// A private_key_jwt client's `jwks_uri` is fetched under the same profile, and kept the same way.
// Written on undici (already the gateway's HTTP client) rather than with a library: what matters
// here is the profile, which no fetch library enforces as a whole.
import type { LookupAddress } from 'node:dns';
import type { JSONWebKeySet } from 'jose';
import { Agent, request } from 'undici';
import {
  canonicalAddress,
  checkEgress,
  DEFAULT_PRIVATE_RANGES,
  type Egress,
  egressHostOf,
  formatIpAddress,
  parseIpAddress,
  type ResolvedAddress,
  rangeContains,
} from '../../shared/egress/index.js';
import { type GatewayError, gatewayError } from '../../shared/errors/index.js';
import {
  type ClientMetadataDocument,
  checkClientIdUrl,
  checkMetadataDocument,
  freshnessMs,
  MAX_METADATA_DOCUMENT_BYTES,
} from '../../shared/oauth/client-id-metadata.js';

export const METADATA_FETCH_TIMEOUT_MS = 5_000;
/** Documents kept at once (the oldest is dropped first). */
const MAX_CACHED = 1_000;

export interface MetadataDocumentsOptions {
  /** The gateway's egress policy and resolver. */
  readonly egress: Egress;
  /** AGENT_GATEWAY_CIMD_ALLOW_PRIVATE: private addresses allowed too. */
  readonly allowPrivate: boolean;
  /** Default METADATA_FETCH_TIMEOUT_MS (tests shorten it). */
  readonly timeoutMs?: number;
  /** Trusted CAs beyond the system's (tests; a process uses NODE_EXTRA_CA_CERTS). */
  readonly ca?: string | undefined;
  readonly now?: () => number;
}

export class MetadataDocuments {
  readonly #options: MetadataDocumentsOptions;
  readonly #cached = new Map<string, { value: unknown; until: number }>();
  readonly #fetching = new Map<string, Promise<unknown>>();
  /** Documents fetched (not served from the cache): for tests and metrics. */
  fetched = 0;

  constructor(options: MetadataDocumentsOptions) {
    this.#options = options;
  }

  /** The valid document `clientId` names; a GatewayError with a CIMD_* code otherwise. */
  get(clientId: string): Promise<ClientMetadataDocument> {
    const checked = checkClientIdUrl(clientId);
    if (!checked.ok) {
      return Promise.reject(
        checked.code === 'CIMD_NOT_HTTPS'
          ? gatewayError('CIMD_NOT_HTTPS', { url: clientId.slice(0, 200) })
          : gatewayError('CIMD_URL_INVALID', { problem: checked.problem }),
      );
    }
    return this.#cachedFetch(`document ${clientId}`, checked.url, (parsed, shown) => {
      const document = checkMetadataDocument(parsed, clientId);
      if (!document.ok) {
        throw gatewayError('CIMD_DOCUMENT_INVALID', { url: shown, problem: document.problem });
      }
      return document.document;
    });
  }

  /** The JWK set at a document's `jwks_uri`, fetched under the same profile. */
  jwks(uri: string): Promise<JSONWebKeySet> {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return Promise.reject(gatewayError('CIMD_URL_INVALID', { problem: 'jwks_uri is not a URL' }));
    }
    if (url.protocol !== 'https:') {
      return Promise.reject(gatewayError('CIMD_NOT_HTTPS', { url: uri.slice(0, 200) }));
    }
    return this.#cachedFetch(`jwks ${uri}`, url, (parsed, shown) => {
      const keys = jwksOf(parsed);
      if (keys === undefined) {
        throw gatewayError('CIMD_DOCUMENT_INVALID', {
          url: shown,
          problem: 'it is not a JWK set (an object with a keys array)',
        });
      }
      return keys;
    });
  }

  /** The value at `url`, fetched once at a time per key and kept as its headers say. */
  #cachedFetch<T>(key: string, url: URL, check: (parsed: unknown, shown: string) => T): Promise<T> {
    const now = this.#now();
    const cached = this.#cached.get(key);
    if (cached !== undefined && cached.until > now) return Promise.resolve(cached.value as T);
    this.#cached.delete(key);
    let fetching = this.#fetching.get(key) as Promise<T> | undefined;
    if (fetching === undefined) {
      fetching = this.#fetch(url, url.href, check).then(({ value, keep }) => {
        if (keep > 0) {
          if (this.#cached.size >= MAX_CACHED) {
            const oldest = this.#cached.keys().next().value;
            if (oldest !== undefined) this.#cached.delete(oldest);
          }
          this.#cached.set(key, { value, until: this.#now() + keep });
        }
        return value;
      });
      const settled = fetching.finally(() => this.#fetching.delete(key));
      settled.catch(() => {});
      this.#fetching.set(key, fetching);
    }
    return fetching;
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  async #fetch<T>(
    url: URL,
    text: string,
    check: (parsed: unknown, shown: string) => T,
  ): Promise<{ value: T; keep: number }> {
    const shown = text.slice(0, 200);
    const timeoutMs = this.#options.timeoutMs ?? METADATA_FETCH_TIMEOUT_MS;
    const signal = AbortSignal.timeout(timeoutMs);
    const timedOut = () =>
      gatewayError('CIMD_FETCH_TIMEOUT', { url: shown, seconds: timeoutMs / 1000 });
    const addresses = await this.#addresses(url, shown);
    const agent = new Agent({
      connect: {
        timeout: timeoutMs,
        servername: url.hostname,
        ...(this.#options.ca === undefined ? {} : { ca: this.#options.ca }),
        // Only the checked addresses: the connection cannot go anywhere else.
        lookup: (_host, options, callback) => {
          const all: LookupAddress[] = addresses.map((entry) => ({
            address: entry.address,
            family: entry.family,
          }));
          if ((options as { all?: boolean }).all) {
            (callback as (error: null, addresses: LookupAddress[]) => void)(null, all);
          } else {
            const first = all[0] as LookupAddress;
            (callback as (error: null, address: string, family: number) => void)(
              null,
              first.address,
              first.family,
            );
          }
        },
      },
    });
    try {
      let answer: Awaited<ReturnType<typeof request>>;
      try {
        answer = await request(url, {
          dispatcher: agent,
          method: 'GET',
          headers: { accept: 'application/json' },
          signal,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
      } catch (error) {
        if (signal.aborted) throw timedOut();
        throw gatewayError('CIMD_FETCH_FAILED', { url: shown, problem: describe(error) });
      }
      const status = answer.statusCode;
      if (status >= 300 && status < 400) {
        discard(answer.body);
        throw gatewayError('CIMD_REDIRECT_REFUSED', { url: shown, status });
      }
      if (status !== 200) {
        discard(answer.body);
        throw gatewayError('CIMD_FETCH_FAILED', { url: shown, problem: `HTTP ${status}` });
      }
      const text = await readBounded(answer.body, shown, signal, timedOut);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw gatewayError('CIMD_DOCUMENT_INVALID', { url: shown, problem: 'it is not JSON' });
      }
      const value = check(parsed, shown);
      const header = (name: string) => {
        const field = answer.headers[name];
        return Array.isArray(field) ? field.join(', ') : field;
      };
      const keep = freshnessMs(
        {
          ...(header('cache-control') === undefined
            ? {}
            : { cacheControl: header('cache-control') }),
          ...(header('expires') === undefined ? {} : { expires: header('expires') }),
          ...(header('date') === undefined ? {} : { date: header('date') }),
        },
        this.#now(),
      );
      this.fetched += 1;
      return { value, keep };
    } finally {
      agent.close().catch(() => {});
    }
  }

  /** The host's addresses, each allowed by the egress policy and (unless allowed) public. */
  async #addresses(url: URL, shown: string): Promise<readonly ResolvedAddress[]> {
    const host = egressHostOf(url);
    let check: Awaited<ReturnType<typeof checkEgress>>;
    try {
      check = await checkEgress(this.#options.egress, host);
    } catch (error) {
      throw gatewayError('CIMD_FETCH_FAILED', { url: shown, problem: describe(error) });
    }
    if (!check.allowed) {
      throw gatewayError('CIMD_ADDRESS_FORBIDDEN', {
        host,
        address: check.refusal.address ?? host,
        problem: check.refusal.detail,
      });
    }
    if (!this.#options.allowPrivate) {
      for (const entry of check.addresses) {
        const parsed = parseIpAddress(entry.address);
        const address = parsed === null ? null : canonicalAddress(parsed);
        if (
          address !== null &&
          DEFAULT_PRIVATE_RANGES.some((range) => rangeContains(range, address))
        ) {
          throw gatewayError('CIMD_ADDRESS_FORBIDDEN', {
            host,
            address: formatIpAddress(address),
            problem: 'a private address (AGENT_GATEWAY_CIMD_ALLOW_PRIVATE is off)',
          });
        }
      }
    }
    return check.addresses;
  }
}

/** The body as text, refused (and no longer read) past MAX_METADATA_DOCUMENT_BYTES. */
async function readBounded(
  body: AsyncIterable<Uint8Array> & { destroy(): unknown },
  shown: string,
  signal: AbortSignal,
  timedOut: () => GatewayError,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.byteLength;
      if (size > MAX_METADATA_DOCUMENT_BYTES) {
        discard(body);
        throw gatewayError('CIMD_DOCUMENT_TOO_LARGE', {
          url: shown,
          limit: MAX_METADATA_DOCUMENT_BYTES,
        });
      }
      chunks.push(Buffer.from(chunk));
    }
  } catch (error) {
    if ((error as GatewayError).code === 'CIMD_DOCUMENT_TOO_LARGE') throw error;
    if (signal.aborted) throw timedOut();
    throw gatewayError('CIMD_FETCH_FAILED', { url: shown, problem: describe(error) });
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A JWK set: an object whose `keys` is an array of objects. */
function jwksOf(parsed: unknown): JSONWebKeySet | undefined {
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const keys = (parsed as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'object' && key !== null)) {
    return undefined;
  }
  return { keys: keys as JSONWebKeySet['keys'] };
}

/** Stops reading a body: the connection is closed, and its abort is nobody's error. */
function discard(body: {
  destroy(): unknown;
  on?: (event: 'error', listener: () => void) => unknown;
}): void {
  body.on?.('error', () => {});
  body.destroy();
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  return `${typeof code === 'string' ? `${code}: ` : ''}${message}`.slice(0, 200);
}
