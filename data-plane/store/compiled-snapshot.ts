// Compiles a ConfigSnapshot into the read-only indexes the hot path uses: API keys by prefix,
// tenants by id with their compiled gateway policy, servers and agents by id, NPL policies by
// pin. All the work happens here, once per snapshot; a request does Map lookups and calls
// compiled closures. Compiled NPL policies are cached by pin and content hash across snapshots,
// so a new snapshot recompiles only what changed.
import {
  BUNDLED_POLICIES,
  type CompiledPolicy,
  compilePolicy,
  failClosedPolicy,
  formatPolicyUri,
  parsePolicy,
} from '../../shared/npl/index.js';
import type {
  AgentConfig,
  ConfigSnapshot,
  ExecutionMode,
  GatewayPolicyConfig,
  McpServerConfig,
  OAuthMode,
  TenantConfig,
  ToolAnnotations,
} from '../../shared/snapshot/index.js';
import {
  compileDestructiveDetector,
  compileExfiltrationDetector,
  type DetectorSignal,
  type ToolCallView,
} from '../inspection/index.js';
import { compileAllowList, compileNameMatcher, type NameMatcher } from './name-matcher.js';

export interface CompiledSnapshot {
  readonly version: number;
  readonly builtAt: string;
  readonly tenants: ReadonlyMap<string, CompiledTenant>;
  readonly apiKeysByPrefix: ReadonlyMap<string, CompiledApiKey>;
  readonly agentsByPublicKey: ReadonlyMap<string, CompiledAgent>;
}

export interface CompiledApiKey {
  readonly id: string;
  readonly tenant: CompiledTenant;
  readonly secretHash: string;
  readonly scopes: ReadonlySet<string>;
  /** Epoch ms, or Infinity. */
  readonly expiresAtMs: number;
}

export interface CompiledTenant {
  readonly id: string;
  readonly name: string;
  readonly configVersion: number;
  readonly policy: CompiledGatewayPolicy;
  readonly servers: ReadonlyMap<string, CompiledServer>;
  readonly agents: ReadonlyMap<string, CompiledAgent>;
  /** Every pin a request may name: bundled policies and the tenant's published versions. */
  readonly policiesByUri: ReadonlyMap<string, CompiledPolicy>;
  /** The tenant's pinned policies, in pin order (unresolvable pins fail closed). */
  readonly pinnedPolicies: readonly CompiledPolicy[];
  /** The context object NPL conditions see as `tenant`. */
  readonly nplTenant: Readonly<Record<string, unknown>>;
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
}

export interface CompiledServer {
  readonly serverId: string;
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
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly role: string;
  readonly killed: boolean;
  /** The agent's allowed tools (exact names or `*` globs); an empty list allows none. */
  readonly isToolAllowed: NameMatcher;
  readonly publicKey: string;
  /** The context object NPL conditions see as `agent`. */
  readonly nplAgent: Readonly<Record<string, unknown>>;
}

const policyCache = new Map<string, CompiledPolicy>();

const bundledByUri: ReadonlyMap<string, CompiledPolicy> = new Map(
  BUNDLED_POLICIES.map((policy) => {
    const compiled = compilePolicy(policy);
    return [compiled.uri, compiled];
  }),
);

export function compileSnapshot(snapshot: ConfigSnapshot): CompiledSnapshot {
  const tenants = new Map<string, CompiledTenant>();
  const apiKeysByPrefix = new Map<string, CompiledApiKey>();
  const agentsByPublicKey = new Map<string, CompiledAgent>();
  for (const config of snapshot.tenants) {
    const tenant = compileTenant(config);
    tenants.set(tenant.id, tenant);
    for (const key of config.apiKeys) {
      apiKeysByPrefix.set(key.prefix, {
        id: key.id,
        tenant,
        secretHash: key.secretHash,
        scopes: new Set(key.scopes),
        expiresAtMs: key.expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(key.expiresAt),
      });
    }
    for (const agent of tenant.agents.values()) agentsByPublicKey.set(agent.publicKey, agent);
  }
  return Object.freeze({
    version: snapshot.version,
    builtAt: snapshot.builtAt,
    tenants,
    apiKeysByPrefix,
    agentsByPublicKey,
  });
}

function compileTenant(config: TenantConfig): CompiledTenant {
  const policiesByUri = new Map(bundledByUri);
  for (const version of config.policies) {
    const uri = formatPolicyUri({ name: version.name, version: version.version });
    policiesByUri.set(uri, compileStoredPolicy(uri, version.contentHash, version.document));
  }
  const pinnedPolicies = config.gatewayPolicy.pinnedPolicies.map(
    (uri) => policiesByUri.get(uri) ?? failClosedPolicy(uri, 'not published'),
  );
  return {
    id: config.id,
    name: config.name,
    configVersion: config.configVersion,
    policy: compileGatewayPolicy(config.gatewayPolicy),
    servers: new Map(
      config.servers.map((server) => [server.serverId, compileServer(config, server)]),
    ),
    agents: new Map(config.agents.map((agent) => [agent.id, compileAgent(config.id, agent)])),
    policiesByUri,
    pinnedPolicies,
    nplTenant: Object.freeze({ id: config.id, name: config.name }),
  };
}

function compileStoredPolicy(uri: string, hash: string, document: unknown): CompiledPolicy {
  const cacheKey = `${uri}#${hash}`;
  const cached = policyCache.get(cacheKey);
  if (cached) return cached;
  let compiled: CompiledPolicy;
  try {
    compiled = compilePolicy(parsePolicy(document as object));
  } catch (error) {
    // A stored document that no longer compiles must not open the gate.
    compiled = failClosedPolicy(uri, `stored document invalid: ${(error as Error).message}`);
  }
  policyCache.set(cacheKey, compiled);
  return compiled;
}

function compileGatewayPolicy(source: GatewayPolicyConfig): CompiledGatewayPolicy {
  return {
    source,
    trustedServers: new Set(source.trustedServers),
    isMethodBlocked: compileNameMatcher(source.blockedMethods),
    isToolBlocked: compileNameMatcher(source.blockedTools),
    denyDestructive: source.denyDestructive,
    detectDestructive: compileDestructiveDetector({ toolPatterns: source.destructiveToolPatterns }),
    detectExfiltration: compileExfiltrationDetector({
      detectSecrets: source.exfilDetectSecrets,
      bulkExportLimit: source.exfilBulkExportLimit,
      checkDestinations: source.exfilCheckDestinations,
      allowedDomains: source.exfilAllowedDomains,
    }),
    oauthMode: source.oauthMode,
    allowedModes: new Set(source.allowedModes),
    approvalTtlMs: source.approvalTtlSeconds * 1000,
    maxDelegationDepth: source.maxDelegationDepth,
  };
}

function compileServer(tenant: TenantConfig, server: McpServerConfig): CompiledServer {
  return {
    serverId: server.serverId,
    serverKey: `${tenant.id}/${server.serverId}`,
    url: server.url,
    transport: server.transport,
    mockResults: new Map(Object.entries(server.mockResults)),
    toolAnnotations: new Map(Object.entries(server.toolAnnotations)),
    nplServer: Object.freeze({ id: server.serverId }),
  };
}

function compileAgent(tenantId: string, agent: AgentConfig): CompiledAgent {
  return {
    id: agent.id,
    tenantId,
    name: agent.name,
    role: agent.role,
    killed: agent.status !== 'active',
    isToolAllowed: compileAllowList(agent.allowedTools),
    publicKey: agent.publicKey,
    nplAgent: Object.freeze({ id: agent.id, name: agent.name, role: agent.role }),
  };
}
