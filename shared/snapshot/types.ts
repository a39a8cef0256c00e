// The configuration snapshot: everything a data plane needs to decide on a request, as plain
// JSON. The control plane builds it from the database; data planes receive it (in-process or
// over the configuration stream), compile it once (data-plane/store) and swap it in whole.
// Secrets appear only as hashes. A snapshot is immutable: a change makes a new version.
// Ids are branded (shared/ids.ts): whoever builds or receives a snapshot is the edge that brands.
import type { GatewayPolicyValues } from '../gateway-policy/gateway-policy-fields.js';
import type { ExecutionMode } from '../gateway-policy/modes.js';
import type { AgentId, ServerId, TenantId } from '../ids.js';
import type { ToolPinDigests } from '../tools/tool-pins.js';

export interface ConfigSnapshot {
  /** Monotonic per control plane; a data plane ignores a version it has already applied. */
  readonly version: number;
  readonly builtAt: string;
  readonly tenants: readonly TenantConfig[];
  /**
   * Public halves of the data planes' access-token signing keys (the JWKS): the signing ones,
   * newest first, then the retired ones still within their retention, most recently retired first.
   */
  readonly tokenSigningKeys: readonly TokenSigningKeyConfig[];
  /**
   * The highest AgentKill.seq committed before the build read the agents: every kill up to it is
   * in `agents` (status killed). A data plane resumes kill deltas after it. Absent in a snapshot
   * persisted before the kill switch: 0.
   */
  readonly killsThrough?: number;
}

export interface TokenSigningKeyConfig {
  /** kid: RFC 7638 thumbprint of the public JWK. */
  readonly kid: string;
  /** `{ kty: 'OKP', crv: 'Ed25519', x }`. */
  readonly publicJwk: Readonly<Record<string, unknown>>;
  /**
   * When the key stopped signing (ISO 8601); absent while it signs. A retired key is listed until
   * retiredAt + RETIRED_TOKEN_KEY_RETENTION_SECONDS (shared/oauth/token-lifetimes.ts), so the
   * tokens it signed verify until they expire.
   */
  readonly retiredAt?: string;
}

export interface TenantConfig {
  readonly id: TenantId;
  readonly name: string;
  readonly configVersion: number;
  readonly gatewayPolicy: GatewayPolicyConfig;
  readonly apiKeys: readonly ApiKeyConfig[];
  readonly servers: readonly McpServerConfig[];
  readonly agents: readonly AgentConfig[];
  /** Every NPL policy version the tenant published (bundled ones are part of the engine). */
  readonly policies: readonly PolicyVersionConfig[];
  /** AgentIAM public material: CA public keys and signed status lists (never a private key). */
  readonly identity: TenantIdentityConfig;
  /** Registered OAuth clients that are not revoked (secrets only as hashes). */
  readonly oauthClients: readonly OAuthClientConfig[];
  /** Access tokens revoked before they expire: refused by introspection and the proxy. */
  readonly revokedTokens: readonly RevokedTokenConfig[];
}

/** What a registered client (RFC 7591) may authenticate with at the token endpoint. */
export const OAUTH_CLIENT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
] as const;
export type RegisteredClientAuthMethod = (typeof OAUTH_CLIENT_AUTH_METHODS)[number];
/** What a stored client uses: a registered client's method, or `none` for a client ID metadata
 *  document client (its client_id is an https URL; PKCE and the agent's identity proof at the
 *  authorization endpoint bind its code). */
export const STORED_OAUTH_CLIENT_AUTH_METHODS = [...OAUTH_CLIENT_AUTH_METHODS, 'none'] as const;
export type OAuthClientAuthMethod = (typeof STORED_OAUTH_CLIENT_AUTH_METHODS)[number];

export interface OAuthClientConfig {
  /** client_id. */
  readonly id: string;
  readonly agentId: AgentId;
  /** SHA-256 (hex) of the secret; null for a private_key_jwt client. */
  readonly secretHash: string | null;
  readonly authMethod: OAuthClientAuthMethod;
  readonly grantTypes: readonly string[];
  /** mcp://{serverId} resources this client may obtain tokens for. */
  readonly audiences: readonly string[];
  /**
   * Registered redirect URIs, exact strings (the authorization endpoint). Absent in a snapshot
   * persisted before the authorization_code grant: none.
   */
  readonly redirectUris?: readonly string[];
}

export interface RevokedTokenConfig {
  readonly jti: string;
  /** ISO 8601; after it the token is refused for its expiry anyway. */
  readonly expiresAt: string;
}

export interface TenantIdentityConfig {
  /** The current `agentiam-ca` key, and retired ones still within their window. */
  readonly caKeys: readonly CaKeyConfig[];
  /** The tenant's revocation status lists, each as its current signed credential. */
  readonly statusLists: readonly StatusListConfig[];
  /**
   * The gateway-wide audit checkpoint keys (docs/audit.md, "Checkpoints"), the same for every
   * tenant: listed in its DID document beside the CA keys. Absent in snapshots built before them.
   */
  readonly auditKeys?: readonly AuditKeyConfig[];
}

export interface AuditKeyConfig {
  /** audit_signing_keys.id. */
  readonly id: string;
  /** `z6Mk…`, as CA keys. */
  readonly publicKeyMultibase: string;
  readonly status: CaKeyStatus;
}

export const CA_KEY_STATUSES = ['active', 'retired'] as const;
export type CaKeyStatus = (typeof CA_KEY_STATUSES)[number];

export interface CaKeyConfig {
  /** TenantSigningKey.id (kid). */
  readonly id: string;
  /** `z6Mk…` (multibase base58btc of multicodec 0xed01 + 32 bytes). */
  readonly publicKeyMultibase: string;
  readonly status: CaKeyStatus;
  /** For a retired key: the end of the window in which it still verifies (ISO 8601). */
  readonly resolvableUntil: string | null;
}

export interface StatusListConfig {
  /** StatusList.id; the list is served at /api/v1/agentiam/status-lists/{id}. */
  readonly id: string;
  /** Bumped on every bit flip; part of the verification cache key. */
  readonly version: number;
  /** The signed BitstringStatusListCredential of this version. */
  readonly credential: Readonly<Record<string, unknown>>;
}

export {
  EXECUTION_MODES,
  type ExecutionMode,
  OAUTH_MODES,
  type OAuthMode,
} from '../gateway-policy/modes.js';

/**
 * The tenant's gateway policy as published: the fields of shared/gateway-policy/
 * gateway-policy-fields.ts. Those added after snapshots were first persisted may be absent from an
 * older one (the MCP proxy's and tool pinning's, docs/mcp-proxy.md, docs/tool-pinning.md): the data
 * plane compiles every absent field to its default.
 */
export type GatewayPolicyConfig = Omit<GatewayPolicyValues, GatewayPolicyFieldAddedLater> &
  Partial<Pick<GatewayPolicyValues, GatewayPolicyFieldAddedLater>>;

type GatewayPolicyFieldAddedLater =
  | 'toolPinning'
  | 'approvalWaitSeconds'
  | 'proxyExecutionMode'
  | 'proxyModeHeader'
  | 'limits';

export interface ApiKeyConfig {
  readonly id: string;
  readonly prefix: string;
  readonly secretHash: string;
  readonly scopes: readonly string[];
  readonly expiresAt: string | null;
}

/** The MCP annotations of a tool, as its upstream's tools/list declares them. */
export interface ToolAnnotations {
  readonly title?: string;
  readonly destructiveHint?: boolean;
  readonly readOnlyHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

export interface McpServerConfig {
  readonly serverId: ServerId;
  readonly url: string;
  readonly transport: string;
  /** Tool name → the JSON-RPC `result` returned in simulation mode. */
  readonly mockResults: Readonly<Record<string, unknown>>;
  readonly toolAnnotations: Readonly<Record<string, ToolAnnotations>>;
  /**
   * Tool name → its pinned digests (docs/tool-pinning.md): approved (null: never approved) and
   * last observed. Absent in a snapshot persisted before pinning: no pins.
   */
  readonly toolPins?: Readonly<Record<string, ToolPinDigests>>;
}

export const AGENT_STATUSES = ['active', 'killed'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export interface AgentConfig {
  readonly id: AgentId;
  readonly name: string;
  readonly role: string;
  readonly status: AgentStatus;
  readonly allowedTools: readonly string[];
  readonly mcpAudiences: readonly string[];
  readonly publicKey: string;
  /**
   * Mode of this agent's MCP proxy calls; null or absent: the tenant's proxyExecutionMode.
   */
  readonly executionMode?: ExecutionMode | null;
}

export interface PolicyVersionConfig {
  readonly name: string;
  readonly version: string;
  readonly contentHash: string;
  /** The validated NPL document. */
  readonly document: unknown;
}
