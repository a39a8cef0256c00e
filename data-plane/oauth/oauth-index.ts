// What the OAuth endpoints look up, built once per applied snapshot (a WeakMap keyed by the
// compiled snapshot, so a new snapshot gets a new index and an old one is collected with it):
// clients by id with their tenant, each agent's MCP audiences, each tenant's revoked jtis, and the
// JWKS (the snapshot's token signing keys, plus this process's own key, which a data plane serves
// even before a snapshot names it). A remote data plane may load a persisted snapshot older than
// these fields: a missing list is an empty one.
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { OAuthClientConfig } from '../../shared/snapshot/index.js';
import type { CompiledSnapshot, CompiledTenant } from '../store/compiled-types.js';

export interface IndexedClient {
  readonly client: OAuthClientConfig;
  readonly tenant: CompiledTenant;
}

export interface OAuthIndex {
  readonly clients: ReadonlyMap<string, IndexedClient>;
  /** tenant id → agent id → the agent's mcpAudiences. */
  readonly audiences: ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;
  /** tenant id → revoked, unexpired jtis. */
  readonly revoked: ReadonlyMap<string, ReadonlySet<string>>;
  /** kid → public key. */
  readonly keys: ReadonlyMap<string, KeyObject>;
  /** The JWKS document, serialized once. */
  readonly jwks: string;
}

export interface OwnSigningKey {
  readonly kid: string;
  readonly publicJwk: JWK;
}

const indexes = new WeakMap<CompiledSnapshot, OAuthIndex>();

export function oauthIndexOf(
  snapshot: CompiledSnapshot | undefined,
  ownKey: OwnSigningKey | undefined,
): OAuthIndex {
  if (!snapshot) return buildIndex(undefined, ownKey);
  let index = indexes.get(snapshot);
  if (!index) {
    index = buildIndex(snapshot, ownKey);
    indexes.set(snapshot, index);
  }
  return index;
}

function buildIndex(
  snapshot: CompiledSnapshot | undefined,
  ownKey: OwnSigningKey | undefined,
): OAuthIndex {
  const clients = new Map<string, IndexedClient>();
  const audiences = new Map<string, Map<string, ReadonlySet<string>>>();
  const revoked = new Map<string, Set<string>>();
  for (const tenant of snapshot?.tenants.values() ?? []) {
    for (const client of tenant.source.oauthClients ?? [])
      clients.set(client.id, { client, tenant });
    audiences.set(
      tenant.id,
      new Map(tenant.source.agents.map((agent) => [agent.id, new Set(agent.mcpAudiences ?? [])])),
    );
    revoked.set(tenant.id, new Set((tenant.source.revokedTokens ?? []).map((token) => token.jti)));
  }
  const published = new Map<string, Readonly<Record<string, unknown>>>();
  for (const key of snapshot?.served.tokenSigningKeys ?? []) published.set(key.kid, key.publicJwk);
  if (ownKey && !published.has(ownKey.kid)) published.set(ownKey.kid, ownKey.publicJwk);
  const keys = new Map<string, KeyObject>();
  const jwks: Record<string, unknown>[] = [];
  for (const [kid, publicJwk] of published) {
    const jwk = { kty: publicJwk.kty, crv: publicJwk.crv, x: publicJwk.x };
    try {
      keys.set(kid, createPublicKey({ key: jwk as never, format: 'jwk' }));
    } catch {
      continue; // A malformed row must not take the JWKS down; it signs nothing that verifies.
    }
    jwks.push({ ...jwk, kid, use: 'sig', alg: 'EdDSA' });
  }
  return { clients, audiences, revoked, keys, jwks: JSON.stringify({ keys: jwks }) };
}
