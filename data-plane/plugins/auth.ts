// API-key authentication against the current snapshot: `Authorization: Bearer agk_<prefix>_<secret>`
// finds its key by prefix in a Map (never a database query), the secret is compared by hash in
// constant time, then expiry and scope are checked. The request carries the snapshot it was
// authenticated against, so everything after uses one consistent configuration.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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

declare module 'fastify' {
  interface FastifyRequest {
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
 * The key a bearer header presents, checked against the snapshot: found by prefix, secret compared
 * by hash in constant time, not expired. Every failure is the same AUTH_INVALID_API_KEY: the
 * answer must not tell which part was wrong. No snapshot yet authorizes nothing (fail closed).
 */
export function findPresentedKey(
  header: string | undefined,
  snapshot: CompiledSnapshot | undefined,
  now = Date.now(),
): CompiledApiKey {
  const presented = header === undefined ? undefined : BEARER.exec(header)?.[1];
  const parsed = parseApiKey(presented);
  const key = parsed && snapshot ? snapshot.apiKeysByPrefix.get(parsed.prefix) : undefined;
  if (!parsed || !key || !secretMatches(parsed.secret, key) || key.expiresAtMs <= now) {
    throw gatewayError('AUTH_INVALID_API_KEY');
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
    // Audited at the edge (plugins/refusals.ts): the key, and so its tenant, is known.
    throw markRefusal(error, { tenantId: key.tenant.id, subjectType: 'api_key', subject: key.id });
  }
  // A key was found, so there is a snapshot.
  return { snapshot: snapshot as CompiledSnapshot, tenant: key.tenant, key };
}

/** Notes each successful use of a key (for `lastUsedAt`); must be cheap and never throw. */
export type KeyUseListener = (keyId: string) => void;

/** An onRequest hook that authenticates before the body is even read. */
export function requireScope(store: SnapshotStore, scope: Scope, onKeyUse?: KeyUseListener) {
  return async function authenticateRequest(
    request: FastifyRequest,
    _reply: FastifyReply,
  ): Promise<void> {
    const auth = authenticate(request.headers.authorization, store, scope);
    request.auth = auth;
    onKeyUse?.(auth.key.id);
  };
}

/** Declares `request.auth` up front (one object shape for every request). */
export const authPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.decorateRequest('auth', null);
  },
  { name: 'agent-gateway-auth' },
);
