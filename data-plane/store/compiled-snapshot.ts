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
import type { AgentId, ServerId, TenantId } from '../../shared/ids.js';
import type { CompiledPolicy } from '../../shared/npl/index.js';
import {
  type CaKeyConfig,
  type ConfigSnapshot,
  checkSnapshotConsistency,
  type ExecutionMode,
  type GatewayPolicyConfig,
  groupProblemsByTenant,
  type OAuthMode,
  type TenantConfig,
  type ToolAnnotations,
} from '../../shared/snapshot/index.js';
import type { DetectorSignal, ToolCallView } from '../inspection/index.js';
import { compileApiKeys, compileTenant } from './compile-tenant.js';
import type { NameMatcher } from './name-matcher.js';

export interface CompiledSnapshot {
  readonly version: number;
  readonly builtAt: string;
  readonly tenants: ReadonlyMap<string, CompiledTenant>;
  readonly apiKeysByPrefix: ReadonlyMap<string, CompiledApiKey>;
  /** Every tenant's signed status lists by StatusList id: GET /api/v1/agentiam/status-lists/{id}. */
  readonly statusListsById: ReadonlyMap<string, CompiledStatusList>;
  /** The tenants that did not advance to this version, and why. */
  readonly rejectedTenants: readonly TenantRejection[];
  /**
   * The configuration actually served: the snapshot as received when every tenant advanced, else
   * with each rejected tenant's last good configuration in its place (or left out when it had
   * none). What a data plane persists, so a restart serves exactly what it served before.
   */
  readonly served: ConfigSnapshot;
}

export interface TenantRejection {
  readonly tenantId: TenantId;
  /** The configVersion the tenant keeps serving; null when it had none and is left out. */
  readonly keptConfigVersion: number | null;
  readonly reasons: readonly string[];
}

export interface CompiledApiKey {
  readonly id: string;
  readonly prefix: string;
  readonly tenant: CompiledTenant;
  readonly secretHash: string;
  readonly scopes: ReadonlySet<string>;
  /** Epoch ms, or Infinity. */
  readonly expiresAtMs: number;
}

export interface CompiledTenant {
  /** The configuration this tenant was compiled from. */
  readonly source: TenantConfig;
  readonly id: TenantId;
  readonly name: string;
  readonly configVersion: number;
  readonly policy: CompiledGatewayPolicy;
  readonly servers: ReadonlyMap<string, CompiledServer>;
  readonly agents: ReadonlyMap<string, CompiledAgent>;
  /** The tenant's agents by public key: a key addresses an agent of the caller's tenant only. */
  readonly agentsByPublicKey: ReadonlyMap<string, CompiledAgent>;
  /** Every pin a request may name: bundled policies and the tenant's published versions. */
  readonly policiesByUri: ReadonlyMap<string, CompiledPolicy>;
  /** The tenant's published policies by `uri#contentHash`: what the next snapshot reuses. */
  readonly policiesByContent: ReadonlyMap<string, CompiledPolicy>;
  /** The tenant's pinned policies, in pin order (unresolvable pins fail closed). */
  readonly pinnedPolicies: readonly CompiledPolicy[];
  /** The context object NPL conditions see as `tenant`. */
  readonly nplTenant: Readonly<Record<string, unknown>>;
  /** AgentIAM: the tenant's DID document, CA keys and decoded status lists. */
  readonly identity: CompiledIdentity;
}

export interface CompiledIdentity {
  readonly tenantId: TenantId;
  /** `did:svc:<tenantId>`. */
  readonly did: string;
  /**
   * The DID document: the active CA key as #agentiam-ca, retired keys in their window as
   * #agentiam-ca-<kid>. Null while the tenant has no CA key (the DID then does not resolve).
   */
  readonly didDocument: Readonly<Record<string, unknown>> | null;
  /**
   * What the gateway's own verifier resolves: the active key alone as #agentiam-ca. A credential
   * signed by a retired key is retried with that key's `asCurrentKeyDocument` while in its window.
   */
  readonly verifierDocument: Readonly<Record<string, unknown>> | null;
  /** Until when `didDocument` lists only keys in their window (the earliest retired key's end). */
  readonly didDocumentValidUntilMs: number;
  readonly activeKey: CaKeyConfig | undefined;
  /** Retired CA keys with a window, whether or not it has passed (checked against the clock). */
  readonly retiredKeys: readonly CompiledRetiredKey[];
  /** The CA key set, as text: a verification cached under one key set is not reused under another. */
  readonly keyEpoch: string;
  /** Status lists by URL (the list credential's `id`, an identity credential's statusListCredential). */
  readonly statusLists: ReadonlyMap<string, CompiledStatusList>;
}

export interface CompiledRetiredKey {
  readonly key: CaKeyConfig;
  /** Epoch ms: credentials signed by this key verify until then. */
  readonly resolvableUntilMs: number;
  /** The tenant's DID document with this key as #agentiam-ca: the verifier's retry loader. */
  readonly asCurrentKeyDocument: Readonly<Record<string, unknown>>;
}

export interface CompiledStatusList {
  /** StatusList.id. */
  readonly id: string;
  /** `<publicUrl>/api/v1/agentiam/status-lists/<id>`, the credential's `id`. */
  readonly url: string;
  readonly version: number;
  /** The decoded bitstring (index 0 = most significant bit of byte 0). */
  readonly bits: Uint8Array;
  /** The signed status-list credential, serialized once (UTF-8 JSON). */
  readonly body: Buffer;
  readonly etag: string;
  /** id, version and proof: what the next snapshot compares to reuse the decoded list. */
  readonly contentKey: string;
}

export interface CompiledGatewayPolicy {
  readonly source: GatewayPolicyConfig;
  readonly trustedServers: ReadonlySet<string>;
  readonly isMethodBlocked: NameMatcher;
  readonly isToolBlocked: NameMatcher;
  readonly denyDestructive: boolean;
  readonly detectDestructive: (call: ToolCallView) => DetectorSignal | null;
  readonly detectExfiltration: (call: ToolCallView) => DetectorSignal | null;
  readonly oauthMode: OAuthMode;
  readonly allowedModes: ReadonlySet<ExecutionMode>;
  readonly approvalTtlMs: number;
  readonly maxDelegationDepth: number;
  /** Spec §5.5: every call presents a credential and an Agent-Proof. */
  readonly requireAgentIdentity: boolean;
}

export interface CompiledServer {
  readonly serverId: ServerId;
  /** Pooling key upstream: stable for one tenant's server. */
  readonly serverKey: string;
  readonly url: string;
  readonly transport: string;
  readonly mockResults: ReadonlyMap<string, unknown>;
  readonly toolAnnotations: ReadonlyMap<string, ToolAnnotations>;
  /** The context object NPL conditions see as `server`. */
  readonly nplServer: Readonly<Record<string, unknown>>;
}

export interface CompiledAgent {
  readonly id: AgentId;
  readonly tenantId: TenantId;
  readonly name: string;
  readonly role: string;
  readonly killed: boolean;
  /** The agent's allowed tools (exact names or `*` globs); an empty list allows none. */
  readonly isToolAllowed: NameMatcher;
  readonly publicKey: string;
  /** The context object NPL conditions see as `agent`. */
  readonly nplAgent: Readonly<Record<string, unknown>>;
}

/**
 * Compiles the snapshot; `previous` (the compiled snapshot serving now) lends the last good state
 * of rejected tenants and the compiled policies that did not change.
 */
export function compileSnapshot(
  snapshot: ConfigSnapshot,
  previous?: CompiledSnapshot,
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
        const tenant = compileTenant(config, prior);
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
        };
  return Object.freeze({
    version: snapshot.version,
    builtAt: snapshot.builtAt,
    tenants,
    apiKeysByPrefix,
    statusListsById,
    rejectedTenants,
    served,
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
