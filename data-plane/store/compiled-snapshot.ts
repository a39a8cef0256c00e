// Compiles a ConfigSnapshot into the read-only indexes the hot path uses: API keys by prefix,
// tenants by id with their compiled gateway policy, servers and agents by id, NPL policies by
// pin. All the work happens here, once per snapshot; a request does Map lookups and calls
// compiled closures.
//
// Tenants are compiled and rejected one by one (the per-resource NACK of the Envoy model): a
// tenant whose configuration fails the consistency check (an id claimed twice) or does not compile
// keeps its compiled state from the previous snapshot, or is left out when it has none, while
// the other tenants advance. Where a kept, older tenant and an advanced one claim the same key
// prefix, the advanced one wins: it comes from the checked snapshot. Agents are found by public
// key within their tenant only (a key is unique per tenant, not across tenants). The
// previous compiled snapshot is also the compiled-policy cache (see compile-tenant.ts).
// The compiled objects carry branded ids; the maps are keyed by plain strings so any id a caller
// holds looks up, and what comes out is branded.
import {
  type ConfigSnapshot,
  checkSnapshotConsistency,
  groupProblemsByTenant,
} from '../../shared/snapshot/index.js';
import { compileApiKeys, compileTenant } from './compile-tenant.js';
import type {
  CompiledApiKey,
  CompiledSnapshot,
  CompiledStatusList,
  CompiledTenant,
  KillMarks,
  PinObservations,
  TenantRejection,
} from './compiled-types.js';
import { KillOverlay } from './kill-overlay.js';
import { PinOverlay } from './pin-overlay.js';

export type * from './compiled-types.js';

/**
 * Compiles the snapshot; `previous` (the compiled snapshot serving now) lends the last good state
 * of rejected tenants and the compiled policies that did not change.
 */
export function compileSnapshot(
  snapshot: ConfigSnapshot,
  previous?: CompiledSnapshot,
  kills: KillMarks = previous?.kills ?? new KillOverlay(),
  pins: PinObservations = previous?.pins ?? new PinOverlay(),
): CompiledSnapshot {
  const rejecting = checkSnapshotConsistency(snapshot).filter((problem) => problem.rejectsTenant);
  const reasonsOf = groupProblemsByTenant(rejecting);
  const tenants = new Map<string, CompiledTenant>();
  const advancedKeys: CompiledApiKey[] = [];
  const rejectedTenants: TenantRejection[] = [];
  const kept = new Set<CompiledTenant>();
  const seen = new Set<string>();
  for (const config of snapshot.tenants) {
    // A repeated tenant id is rejected at its first occurrence (the check flags every one).
    if (seen.has(config.id)) continue;
    seen.add(config.id);
    const prior = previous?.tenants.get(config.id);
    let reasons = reasonsOf.get(config.id)?.map((problem) => problem.message);
    if (reasons === undefined) {
      try {
        const tenant = compileTenant(config, prior, kills, pins);
        advancedKeys.push(...compileApiKeys(config, tenant));
        tenants.set(tenant.id, tenant);
        continue;
      } catch (error) {
        reasons = [`does not compile: ${(error as Error).message}`];
      }
    }
    rejectedTenants.push({
      tenantId: config.id,
      keptConfigVersion: prior?.configVersion ?? null,
      reasons,
    });
    if (prior) {
      tenants.set(prior.id, prior);
      kept.add(prior);
    }
  }
  const apiKeysByPrefix = indexApiKeys(advancedKeys, kept, previous);
  const statusListsById = new Map<string, CompiledStatusList>();
  for (const tenant of tenants.values()) {
    for (const list of tenant.identity.statusLists.values()) statusListsById.set(list.id, list);
  }
  const served: ConfigSnapshot =
    rejectedTenants.length === 0
      ? snapshot
      : {
          version: snapshot.version,
          builtAt: snapshot.builtAt,
          tenants: [...tenants.values()].map((tenant) => tenant.source),
          tokenSigningKeys: snapshot.tokenSigningKeys,
          ...(snapshot.killsThrough === undefined ? {} : { killsThrough: snapshot.killsThrough }),
        };
  return Object.freeze({
    version: snapshot.version,
    builtAt: snapshot.builtAt,
    tenants,
    apiKeysByPrefix,
    statusListsById,
    rejectedTenants,
    served,
    kills,
    pins,
  });
}

/** API keys by prefix; a kept tenant's claims yield to advanced ones. */
function indexApiKeys(
  advancedKeys: readonly CompiledApiKey[],
  kept: ReadonlySet<CompiledTenant>,
  previous: CompiledSnapshot | undefined,
): ReadonlyMap<string, CompiledApiKey> {
  const apiKeysByPrefix = new Map<string, CompiledApiKey>();
  for (const key of advancedKeys) apiKeysByPrefix.set(key.prefix, key);
  if (previous && kept.size > 0) {
    for (const [prefix, key] of previous.apiKeysByPrefix) {
      if (kept.has(key.tenant) && !apiKeysByPrefix.has(prefix)) apiKeysByPrefix.set(prefix, key);
    }
  }
  return apiKeysByPrefix;
}
