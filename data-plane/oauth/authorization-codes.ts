// Authorization codes of the authorization_code grant (RFC 6749 §4.1, PKCE RFC 7636): 256 random
// bits, base64url, held in this process's memory only, bound to the client, the redirect URI,
// the S256 code challenge, the one resource and the agent; usable once within 60 s. A code is
// consumed by its first presentation whatever the outcome (a wrong verifier burns it too), so a
// stolen code can be tried once at most. In a split deployment the token request must reach the
// data plane that issued the code (sticky routing of /oauth/authorize and /oauth/token by
// client_id, or one data plane serving both); another data plane answers invalid_grant.
// The store is bounded: when it holds `capacity` live codes, authorization fails closed
// (temporarily_unavailable) until codes expire.
// A consumed code is remembered, with the tokens issued from it, until the last of them expires:
// a second presentation is a replay (RFC 6749 §4.1.2: the code may have been stolen), and the
// token endpoint revokes those tokens. That memory is bounded too: beyond `capacity` the oldest
// consumed codes are forgotten (a replay of one is then only refused).
import { createHash, randomBytes } from 'node:crypto';
import { MAX_TOKEN_LIFETIME_SECONDS } from '../../shared/oauth/token-lifetimes.js';
import type { IssuedTokenRecord } from './issued-tokens.js';

export const AUTHORIZATION_CODE_LIFETIME_MS = 60_000;
export const DEFAULT_CODE_CAPACITY = 100_000;

export interface AuthorizationGrant {
  readonly clientId: string;
  readonly tenantId: string;
  readonly agentId: string;
  /**
   * For a delegate: the verified delegation chain's agent ids, root first, ending at `agentId`
   * (the token's RFC 8693 `act` names the delegators). Empty without delegation.
   */
  readonly delegationChain: readonly string[];
  readonly redirectUri: string;
  /** The S256 code challenge (base64url SHA-256 of the verifier). */
  readonly codeChallenge: string;
  /** The resource the token will be for, as requested. */
  readonly resource: string;
  /**
   * The id of the identity credential the agent proved itself with (the root credential of a
   * delegation chain): revoking it revokes the tokens issued from this code.
   */
  readonly credentialId: string | undefined;
  /** Epoch ms. */
  readonly expiresAt: number;
}

/** A consumed code: the tokens issued from it, revoked if it is presented again. */
export interface ConsumedCode {
  readonly tenantId: string;
  readonly tokens: IssuedTokenRecord[];
  /** Epoch ms after which no token issued from it is alive. */
  readonly forgetAt: number;
}

export type Consumption =
  | { readonly kind: 'grant'; readonly grant: AuthorizationGrant }
  /** Presented before: the consumed code, to revoke what it gave. */
  | { readonly kind: 'replayed'; readonly consumed: ConsumedCode }
  /** Unknown or expired. */
  | { readonly kind: 'unknown' };

export class AuthorizationCodes {
  readonly #capacity: number;
  /** code → grant; Map order is issue order, so expired codes are at the front. */
  readonly #codes = new Map<string, AuthorizationGrant>();
  /** code → what it gave; Map order is consumption order. */
  readonly #consumed = new Map<string, ConsumedCode>();

  constructor(options: { capacity?: number | undefined } = {}) {
    this.#capacity = options.capacity ?? DEFAULT_CODE_CAPACITY;
  }

  get size(): number {
    return this.#codes.size;
  }

  /** A new code for the grant; undefined when the store is full. */
  issue(grant: Omit<AuthorizationGrant, 'expiresAt'>, nowMs = Date.now()): string | undefined {
    this.#forgetExpired(nowMs);
    if (this.#codes.size >= this.#capacity) return undefined;
    const code = randomBytes(32).toString('base64url');
    this.#codes.set(code, { ...grant, expiresAt: nowMs + AUTHORIZATION_CODE_LIFETIME_MS });
    return code;
  }

  /**
   * Takes the code out of the store, whatever comes of the request: its grant while it is
   * unexpired; `replayed` when it was consumed before.
   */
  consume(code: string, nowMs = Date.now()): Consumption {
    const grant = this.#codes.get(code);
    if (grant === undefined) {
      const consumed = this.#consumed.get(code);
      return consumed !== undefined && consumed.forgetAt > nowMs
        ? { kind: 'replayed', consumed }
        : { kind: 'unknown' };
    }
    this.#codes.delete(code);
    if (grant.expiresAt <= nowMs) return { kind: 'unknown' };
    this.#rememberConsumed(code, grant.tenantId, nowMs);
    return { kind: 'grant', grant };
  }

  /** Notes a token issued from a consumed code (revoked if the code is replayed). */
  recordToken(code: string, token: IssuedTokenRecord): void {
    this.#consumed.get(code)?.tokens.push(token);
  }

  #rememberConsumed(code: string, tenantId: string, nowMs: number): void {
    for (const [old, consumed] of this.#consumed) {
      if (consumed.forgetAt > nowMs && this.#consumed.size < this.#capacity) break;
      this.#consumed.delete(old);
    }
    this.#consumed.set(code, {
      tenantId,
      tokens: [],
      forgetAt: nowMs + AUTHORIZATION_CODE_LIFETIME_MS + MAX_TOKEN_LIFETIME_SECONDS * 1000,
    });
  }

  #forgetExpired(nowMs: number): void {
    for (const [code, grant] of this.#codes) {
      if (grant.expiresAt > nowMs) return;
      this.#codes.delete(code);
    }
  }
}

/** The S256 challenge of a verifier (RFC 7636 §4.2). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** RFC 7636 §4.1: 43-128 unreserved characters. */
export const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge: 32 bytes as unpadded base64url. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
