// Client authentication at the token, introspection and revocation endpoints (RFC 6749 §2.3):
// - client_secret_basic: HTTP Basic, id and secret form-url-decoded (RFC 6749 §2.3.1);
// - client_secret_post: client_id and client_secret parameters (a client with a secret may use
//   either, whatever it registered);
// - private_key_jwt (RFC 7523 §2.2): client_assertion_type jwt-bearer and an assertion signed
//   (alg EdDSA, or Ed25519 as RFC 9864 names it) by the agent's own key (its registered z6Mk…
//   public key), iss = sub = client_id, aud the token endpoint URL, the called endpoint's URL
//   or the issuer, exp at most 5 minutes ahead, jti used once (remembered until exp in a bounded
//   store; a full store refuses, fail closed).
// Exactly one method per request. Secrets are compared by hash in constant time, and an unknown
// client costs the same hash. The credentials are always verified first: a right one is accepted
// whatever failed before (a stranger who knows a client id must not lock its agent out); only a
// failure consults the failure limiter (auth-failure-limiter.ts), which answers it 429 instead
// of 401 once its client id at that address, or that address, is over the limit. Both answers
// come after the same verification work.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { decodeJwt } from 'jose';
import { gatewayError } from '../../shared/errors/index.js';
import { decodeEd25519PublicKey } from '../../shared/identity/ed25519-multibase.js';
import {
  hashClientSecret,
  isClientId,
  verifyClientSecret,
} from '../../shared/oauth/client-credentials.js';
import { ReplayGuard } from '../agentiam/replay-guard.js';
import { markClientRefusal } from '../refusal-subjects.js';
import type { AuthFailureLimiter } from './auth-failure-limiter.js';
import { verifyClientAssertion } from './client-assertion.js';
import type { IndexedClient, OAuthIndex } from './oauth-index.js';
import { type OAuthParams, optionalParam } from './request-params.js';

export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/**
 * EdDSA, and its fully-specified name for the same Ed25519 signature (RFC 9864), which current
 * clients (oauth4webapi among them) write for an Ed25519 key. Nothing else verifies.
 */
const ASSERTION_ALGORITHMS = ['EdDSA', 'Ed25519'];
/** A hash to compare against when the client is unknown: the same work as a known one. */
const UNKNOWN_CLIENT_HASH = hashClientSecret('unknown client');

export interface ClientAuthRequest {
  readonly authorization: string | undefined;
  readonly params: OAuthParams;
  /** The remote address, for the failure limit. */
  readonly address: string;
  /** The URL of the endpoint called (an accepted assertion audience). */
  readonly endpointUrl: string;
  readonly tokenEndpointUrl: string;
  readonly issuer: string;
}

export class ClientAuthenticator {
  readonly #limiter: AuthFailureLimiter;
  readonly #assertionJtis: ReplayGuard;
  /** Agent public keys (z6Mk…) as KeyObjects: decoding is cheap, but not free per request. */
  readonly #agentKeys = new Map<string, KeyObject>();

  constructor(limiter: AuthFailureLimiter, options: { assertionJtiCapacity?: number } = {}) {
    this.#limiter = limiter;
    this.#assertionJtis = new ReplayGuard({ capacity: options.assertionJtiCapacity ?? 100_000 });
  }

  /** The authenticated client, or an OAUTH_INVALID_CLIENT / OAUTH_INVALID_REQUEST / 429 error. */
  async authenticate(index: OAuthIndex, request: ClientAuthRequest): Promise<IndexedClient> {
    const presented = presentedCredentials(request);
    const limitKey = isClientId(presented.clientId) ? presented.clientId : undefined;
    try {
      return await this.#check(index, request, presented);
    } catch (error) {
      const retryAfterSeconds = this.#limiter.refuseFailure(limitKey, request.address);
      const refusal =
        retryAfterSeconds > 0
          ? gatewayError(
              'OAUTH_RATE_LIMITED',
              { retryAfterSeconds },
              { details: { retryAfterSeconds } },
            )
          : error;
      markClientRefusal(refusal, index.clients.get(presented.clientId));
      throw refusal;
    }
  }

  async #check(
    index: OAuthIndex,
    request: ClientAuthRequest,
    presented: PresentedCredentials,
  ): Promise<IndexedClient> {
    const found = index.clients.get(presented.clientId);
    if (presented.kind === 'assertion') {
      if (!found) throw invalidClient('unknown client');
      if (found.client.authMethod !== 'private_key_jwt') {
        throw invalidClient('the client is not registered for private_key_jwt');
      }
      await this.#verifyAssertion(found, presented.assertion, request);
      return found;
    }
    const matches = verifyClientSecret(
      presented.secret,
      found?.client.secretHash ?? UNKNOWN_CLIENT_HASH,
    );
    if (!found || found.client.secretHash === null) {
      throw invalidClient(found ? 'the client has no secret' : 'unknown client');
    }
    if (!matches) throw invalidClient('wrong secret');
    return found;
  }

  async #verifyAssertion(
    found: IndexedClient,
    assertion: string,
    request: ClientAuthRequest,
  ): Promise<void> {
    const { client, tenant } = found;
    const agent = tenant.agents.get(client.agentId);
    const key = agent ? this.#agentKey(agent.publicKey) : undefined;
    if (!key) throw invalidClient('the agent has no Ed25519 key');
    await verifyClientAssertion(assertion, key, {
      clientId: client.id,
      audiences: [request.tokenEndpointUrl, request.endpointUrl, request.issuer],
      algorithms: ASSERTION_ALGORITHMS,
      jtis: this.#assertionJtis,
    });
  }

  #agentKey(publicKey: string): KeyObject | undefined {
    let key = this.#agentKeys.get(publicKey);
    if (key) return key;
    const raw = decodeEd25519PublicKey(publicKey);
    if (!raw) return undefined;
    key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') },
      format: 'jwk',
    });
    if (this.#agentKeys.size >= 10_000) this.#agentKeys.clear();
    this.#agentKeys.set(publicKey, key);
    return key;
  }
}

type PresentedCredentials =
  | { readonly kind: 'secret'; readonly clientId: string; readonly secret: string }
  | { readonly kind: 'assertion'; readonly clientId: string; readonly assertion: string };

/** Which method the request uses; invalid_request for two, invalid_client for none. */
function presentedCredentials(request: ClientAuthRequest): PresentedCredentials {
  const { params } = request;
  const bodyId = optionalParam(params, 'client_id');
  const bodySecret = optionalParam(params, 'client_secret');
  const assertionType = optionalParam(params, 'client_assertion_type');
  const assertion = optionalParam(params, 'client_assertion');
  const basic = parseBasic(request.authorization);
  const methods =
    Number(basic !== undefined) +
    Number(bodySecret !== undefined) +
    Number(assertionType !== undefined || assertion !== undefined);
  if (methods > 1) {
    throw gatewayError('OAUTH_INVALID_REQUEST', {
      problem: 'more than one client authentication method',
    });
  }
  if (basic) {
    if (bodyId !== undefined && bodyId !== basic.clientId) {
      throw invalidClient('client_id differs from the Basic credentials');
    }
    return { kind: 'secret', ...basic };
  }
  if (assertionType !== undefined || assertion !== undefined) {
    if (assertionType !== JWT_BEARER_ASSERTION_TYPE) {
      throw invalidClient(`client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}`);
    }
    if (!assertion) throw invalidClient('client_assertion is missing');
    let iss: unknown;
    try {
      iss = decodeJwt(assertion).iss;
    } catch {
      throw invalidClient('client_assertion is not a JWT');
    }
    if (typeof iss !== 'string') throw invalidClient('client assertion has no iss');
    if (bodyId !== undefined && bodyId !== iss) {
      throw invalidClient('client_id differs from the assertion issuer');
    }
    return { kind: 'assertion', clientId: iss, assertion };
  }
  if (bodyId !== undefined && bodySecret !== undefined) {
    return { kind: 'secret', clientId: bodyId, secret: bodySecret };
  }
  throw invalidClient('no client credentials');
}

/** RFC 6749 §2.3.1: Basic credentials are form-url-encoded id and secret. */
function parseBasic(
  authorization: string | undefined,
): { clientId: string; secret: string } | undefined {
  if (authorization === undefined) return undefined;
  const match = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (!match) throw invalidClient('the Authorization header is not Basic credentials');
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient('the Basic credentials have no colon');
  try {
    return {
      clientId: formUrlDecode(decoded.slice(0, colon)),
      secret: formUrlDecode(decoded.slice(colon + 1)),
    };
  } catch {
    throw invalidClient('the Basic credentials are not form-url-encoded');
  }
}

function formUrlDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

function invalidClient(problem: string) {
  return gatewayError('OAUTH_INVALID_CLIENT', { problem });
}
