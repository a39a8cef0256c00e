// The shapes the hot path reads: a compiled snapshot and its compiled tenants, keys, servers,
// agents and AgentIAM identity. Only types: compiled-snapshot.ts, compile-tenant.ts and
// compile-identity.ts build them, and everything else reads them.
import type { GatewayPolicyValues } from '../../shared/gateway-policy/gateway-policy-fields.js';
import type { AgentId, ServerId, TenantId } from '../../shared/ids.js';
import type { CompiledPolicy } from '../../shared/npl/index.js';
import type {
  AuditKeyConfig,
  CaKeyConfig,
  ConfigSnapshot,
  ExecutionMode,
  OAuthMode,
  TenantConfig,
  ToolAnnotations,
} from '../../shared/snapshot/index.js';
import type {
  ToolPinDigests,
  ToolPinningMode,
  ToolPinVerdict,
} from '../../shared/tools/tool-pins.js';
import type { DetectorSignal, ToolCallView } from '../inspection/index.js';
import type { CompiledLimits } from '../limits/compiled-limits.js';
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
  /**
   * The store's kill deltas not yet in a snapshot (shared by every snapshot of one store): status
   * lists are looked up through it (`kills.statusListByUrl`, `kills.statusListById`), and
   * `CompiledAgent.killed` consults it.
   */
  readonly kills: KillMarks;
  /**
   * The store's pin overlay (data-plane/store/pin-overlay.ts): tool digests listings revealed
   * before a snapshot carried them; `CompiledServer.toolVerdict` consults it.
   */
  readonly pins: PinObservations;
}

/** What a compiled snapshot reads of the store's pin overlay. */
export interface PinObservations {
  /** The digest a listing revealed for the tool and no snapshot carries yet, if any. */
  observed(serverKey: string, toolName: string): string | undefined;
}

/**
 * What a compiled snapshot reads of the store's kill deltas (data-plane/store/kill-overlay.ts
 * implements it): whether a delta killed an agent, and the newer of a snapshot's status list and
 * an overlaid one.
 */
export interface KillMarks {
  isKilled(agentId: string): boolean;
  statusListByUrl(
    url: string,
    fromSnapshot: CompiledStatusList | undefined,
  ): CompiledStatusList | undefined;
  statusListById(
    id: string,
    fromSnapshot: CompiledStatusList | undefined,
  ): CompiledStatusList | undefined;
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
  /** Whether a pinned policy reads `usage.*`: then a call under limits reads its usage first. */
  readonly pinnedReadUsage: boolean;
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
  /** The gateway's audit checkpoint keys, listed in the DID document (not for credentials). */
  readonly auditKeys: readonly AuditKeyConfig[];
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
  /**
   * Every field as published, a field the snapshot lacks (one older than the field) at its
   * default: a step reads here a field that needs no compiling.
   */
  readonly values: GatewayPolicyValues;
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
  /** Tool-definition pinning (docs/tool-pinning.md). */
  readonly toolPinning: ToolPinningMode;
  /** How long the MCP proxy keeps a held tools/call open for the decision, in ms. */
  readonly approvalWaitMs: number;
  /** Mode of MCP proxy calls of agents without their own. */
  readonly proxyExecutionMode: ExecutionMode;
  /** Whether a proxy client may choose the mode with an X-Execution-Mode header. */
  readonly proxyModeHeader: boolean;
  /** Usage limits and budgets (docs/limits.md), matched per (server, tool). */
  readonly limits: CompiledLimits;
}

export interface CompiledServer {
  readonly serverId: ServerId;
  /** Pooling key upstream: stable for one tenant's server. */
  readonly serverKey: string;
  readonly url: string;
  readonly transport: string;
  readonly mockResults: ReadonlyMap<string, unknown>;
  readonly toolAnnotations: ReadonlyMap<string, ToolAnnotations>;
  /** Tool name → its pinned digests as the snapshot carries them (docs/tool-pinning.md). */
  readonly toolPins: ReadonlyMap<string, ToolPinDigests>;
  /**
   * Whether the tool is held under the tenant's pinning mode: undefined (callable), 'changed' or
   * 'not_approved'. The observed digest is `listedDigest` when given (a tools/list being
   * answered now), else one a listing through this process revealed (the pin overlay), else the
   * snapshot's.
   */
  toolVerdict(toolName: string, listedDigest?: string): ToolPinVerdict | undefined;
  /** The context object NPL conditions see as `server`. */
  readonly nplServer: Readonly<Record<string, unknown>>;
}

export interface CompiledAgent {
  readonly id: AgentId;
  readonly tenantId: TenantId;
  readonly name: string;
  readonly role: string;
  /**
   * The snapshot says killed, or a kill delta reached the store since it was compiled
   * (kill-overlay.ts): once true, never false again.
   */
  readonly killed: boolean;
  /** The agent's allowed tools (exact names or `*` globs); an empty list allows none. */
  readonly isToolAllowed: NameMatcher;
  readonly publicKey: string;
  /** Mode of this agent's MCP proxy calls; null: the tenant's proxyExecutionMode. */
  readonly executionMode: ExecutionMode | null;
  /** The context object NPL conditions see as `agent`. */
  readonly nplAgent: Readonly<Record<string, unknown>>;
}
