// API-key authentication against the current snapshot: `Authorization: Bearer agk_<prefix>_<secret>`
// finds its key by prefix in a Map (never a database query), the secret is compared by hash in
// constant time, then expiry and scope are checked. The request carries the snapshot it was
// authenticated against, so everything after uses one consistent configuration.
//
// The auth plugin is the one place that knows the store and the key-use listener: registered once
// by buildDataPlaneApp, it decorates the instance with `requireScope(scope)` (a route's onRequest
// hook) and `authenticateApiKey(header, scope)` (for a surface that accepts other credentials
// too, the MCP proxy). Routes name `agent-gateway-auth` in their dependencies and never see the
// store for authentication. Both hand out closures made at boot: per request the cost is the
// check itself, as before.
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { markRefusal } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import {
  equalInConstantTime,
  parseApiKey,
  verifyApiKeySecret,
} from '../../shared/identity/api-keys.js';
import type { Scope } from '../../shared/identity/scopes.js';
import type {
  CompiledApiKey,
  CompiledSnapshot,
  CompiledTenant,
} from '../store/compiled-snapshot.js';
import type { SnapshotStore } from '../store/snapshot-store.js';

export interface AuthContext {
  readonly snapshot: CompiledSnapshot;
  readonly tenant: CompiledTenant;
  readonly key: CompiledApiKey;
}

/** Notes each successful use of a key (for `lastUsedAt`); must be cheap and never throw. */
export type KeyUseListener = (keyId: string) => void;

/**
 * Authenticates a bearer header's API key for `scope` and notes the use. Throws
 * AUTH_INVALID_API_KEY (401), or AUTH_INSUFFICIENT_SCOPE (403, marked for the refusal audit).
 */
export type ApiKeyAuthenticator = (authorization: string | undefined, scope: Scope) => AuthContext;

declare module 'fastify' {
  interface FastifyInstance {
    /** The auth plugin's check, for a surface that authenticates its bearer itself. */
    authenticateApiKey: ApiKeyAuthenticator;
    /** An onRequest hook demanding an API key with `scope`; it sets `request.auth`. */
    requireScope: (scope: Scope) => onRequestHookHandler;
  }
  interface FastifyRequest {
    /** The key `requireScope` authenticated, its tenant and snapshot; null before (and elsewhere). */
    auth: AuthContext | null;
  }
}

const BEARER = /^Bearer ([^\s]+)$/;

/**
 * The secret that last verified against each key of the snapshot being served. A key presented
 * again (every call of an agent) is compared with it in constant time instead of being hashed
 * again (SHA-256 was most of the authentication cost). Keyed by the compiled key: a new snapshot
 * starts with none, so a revoked or rotated key's secret goes with the snapshot that held it. The
 * process sees the plaintext secret on every request anyway; this keeps one per key, no more.
 */
const verifiedSecrets = new WeakMap<CompiledApiKey, string>();

function secretMatches(secret: string, key: CompiledApiKey): boolean {
  const verified = verifiedSecrets.get(key);
  if (verified !== undefined && equalInConstantTime(secret, verified)) return true;
  if (!verifyApiKeySecret(secret, key.secretHash)) return false;
  verifiedSecrets.set(key, secret);
  return true;
}

/**
 * The three ways AUTH_INVALID_API_KEY is worded. A missing header or one that is not a bearer
 * header is the caller's setup and is said as such; every failure of the key itself is the same
 * "invalid API key": the answer must not tell which part of a key was wrong.
 */
export const API_KEY_PROBLEMS = {
  missing: 'no API key: the request has no Authorization header',
  notBearer: 'the Authorization header is not of the form "Bearer <API key>"',
  invalid: 'invalid API key',
} as const;

/**
 * The key a bearer header presents, checked against the snapshot: found by prefix, secret compared
 * by hash in constant time, not expired. No snapshot yet authorizes nothing (fail closed).
 */
export function findPresentedKey(
  header: string | undefined,
  snapshot: CompiledSnapshot | undefined,
  now = Date.now(),
): CompiledApiKey {
  if (header === undefined || header.trim() === '') {
    throw gatewayError('AUTH_INVALID_API_KEY', { problem: API_KEY_PROBLEMS.missing });
  }
  const presented = BEARER.exec(header)?.[1];
  if (presented === undefined) {
    throw gatewayError('AUTH_INVALID_API_KEY', { problem: API_KEY_PROBLEMS.notBearer });
  }
  const parsed = parseApiKey(presented);
  const key = parsed && snapshot ? snapshot.apiKeysByPrefix.get(parsed.prefix) : undefined;
  if (!parsed || !key || !secretMatches(parsed.secret, key) || key.expiresAtMs <= now) {
    throw gatewayError('AUTH_INVALID_API_KEY', { problem: API_KEY_PROBLEMS.invalid });
  }
  return key;
}

export function authenticate(
  header: string | undefined,
  store: SnapshotStore,
  scope: Scope,
  now = Date.now(),
): AuthContext {
  const snapshot = store.current;
  const key = findPresentedKey(header, snapshot, now);
  if (!key.scopes.has(scope)) {
    const error = gatewayError(
      'AUTH_INSUFFICIENT_SCOPE',
      { scope },
      {
        details: { requiredScope: scope },
      },
    );
    // Audited at the edge (http-edge/refusals.ts): the key, and so its tenant, is known.
    throw markRefusal(error, { tenantId: key.tenant.id, subjectType: 'api_key', subject: key.id });
  }
  // A key was found, so there is a snapshot.
  return { snapshot: snapshot as CompiledSnapshot, tenant: key.tenant, key };
}

export interface AuthPluginOptions {
  /** The snapshot keys are checked against (its current one, per request). */
  readonly store: SnapshotStore;
  /** Notes key uses for `lastUsedAt`. */
  readonly onKeyUse?: KeyUseListener | undefined;
}

/**
 * Decorates the instance with the API-key check over `options.store` (`authenticateApiKey`,
 * `requireScope`) and declares `request.auth` up front (one object shape for every request).
 */
export const authPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: AuthPluginOptions) => {
    const { store, onKeyUse } = options;
    const authenticateApiKey: ApiKeyAuthenticator = (authorization, scope) => {
      const auth = authenticate(authorization, store, scope);
      onKeyUse?.(auth.key.id);
      return auth;
    };
    // Made once per route at registration; runs before the body is even read.
    const requireScope = (scope: Scope): onRequestHookHandler =>
      async function authenticateRequest(request: FastifyRequest): Promise<void> {
        const auth = authenticate(request.headers.authorization, store, scope);
        request.auth = auth;
        onKeyUse?.(auth.key.id);
      };
    app.decorateRequest('auth', null);
    app.decorate('authenticateApiKey', authenticateApiKey);
    app.decorate('requireScope', requireScope);
  },
  { name: 'agent-gateway-auth' },
);
