// Compiles one tenant's configuration into the read-only objects the hot path uses: its gateway
// policy's matchers and detectors, servers and agents by id, NPL policies by pin. Throws when the
// configuration cannot be compiled, so the snapshot compiler can hold that tenant back alone.
// Its AgentIAM material (DID document, decoded status lists) is compiled by compile-identity.ts.
// A stored NPL policy is compiled once per content: the tenant's previous compiled state lends
// every policy whose uri and content hash are unchanged, and a policy no longer published is
// simply not carried over, so nothing outlives the snapshots that use it.
import { withGatewayPolicyDefaults } from '../../shared/gateway-policy/gateway-policy-fields.js';
import type { TenantId } from '../../shared/ids.js';
import { usageLimitsRule } from '../../shared/limits/usage-limits.js';
import {
  BUNDLED_POLICIES,
  buildFailClosedPolicy,
  type CompiledPolicy,
  compilePolicy,
  formatPolicyUri,
  parsePolicy,
} from '../../shared/npl/index.js';
import type {
  AgentConfig,
  GatewayPolicyConfig,
  McpServerConfig,
  TenantConfig,
} from '../../shared/snapshot/index.js';
import {
  pinVerdict,
  type ToolPinningMode,
  type ToolPinVerdict,
} from '../../shared/tools/tool-pins.js';
import { compileDestructiveDetector, compileExfiltrationDetector } from '../inspection/index.js';
import { compileLimits } from '../limits/compiled-limits.js';
import { USAGE_ROOT } from '../limits/usage-context.js';
import { compileIdentity } from './compile-identity.js';
import type {
  CompiledAgent,
  CompiledApiKey,
  CompiledGatewayPolicy,
  CompiledServer,
  CompiledTenant,
  KillMarks,
  PinObservations,
} from './compiled-types.js';
import { KillOverlay } from './kill-overlay.js';
import { compileAllowList, compileNameMatcher } from './name-matcher.js';

// The bundled policies are part of the engine, not of a snapshot: compiled once per process.
const bundledByUri: ReadonlyMap<string, CompiledPolicy> = new Map(
  BUNDLED_POLICIES.map((policy) => {
    const compiled = compilePolicy(policy);
    return [compiled.uri, compiled];
  }),
);

/** Compiles the tenant, reusing unchanged NPL policies from its previous compiled state. */
export function compileTenant(
  config: TenantConfig,
  previous: CompiledTenant | undefined,
  kills: KillMarks = new KillOverlay(),
  pins: PinObservations = NO_PIN_OBSERVATIONS,
): CompiledTenant {
  const policiesByUri = new Map(bundledByUri);
  const policiesByContent = new Map<string, CompiledPolicy>();
  for (const version of config.policies) {
    const uri = formatPolicyUri({ name: version.name, version: version.version });
    const contentKey = `${uri}#${version.contentHash}`;
    const compiled =
      previous?.policiesByContent.get(contentKey) ?? compileStoredPolicy(uri, version.document);
    policiesByContent.set(contentKey, compiled);
    policiesByUri.set(uri, compiled);
  }
  const pinnedPolicies = config.gatewayPolicy.pinnedPolicies.map(
    (uri) => policiesByUri.get(uri) ?? buildFailClosedPolicy(uri, 'not published'),
  );
  const agents = new Map(
    config.agents.map((agent) => [agent.id, compileAgent(config.id, agent, kills)]),
  );
  const policy = compileGatewayPolicy(config.gatewayPolicy);
  return {
    source: config,
    id: config.id,
    name: config.name,
    configVersion: config.configVersion,
    policy,
    servers: new Map(
      config.servers.map((server) => [
        server.serverId,
        compileServer(config, server, policy.toolPinning, pins),
      ]),
    ),
    agents,
    agentsByPublicKey: new Map([...agents.values()].map((agent) => [agent.publicKey, agent])),
    policiesByUri,
    policiesByContent,
    pinnedPolicies,
    pinnedReadUsage: pinnedPolicies.some((pinned) => pinned.pathRoots.has(USAGE_ROOT)),
    nplTenant: Object.freeze({ id: config.id, name: config.name }),
    identity: compileIdentity(config, previous?.identity),
  };
}

/** The tenant's API keys, each pointing at the compiled tenant it authenticates for. */
export function compileApiKeys(config: TenantConfig, tenant: CompiledTenant): CompiledApiKey[] {
  return config.apiKeys.map((key) => ({
    id: key.id,
    prefix: key.prefix,
    tenant,
    secretHash: key.secretHash,
    scopes: new Set(key.scopes),
    expiresAtMs: key.expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(key.expiresAt),
  }));
}

function compileStoredPolicy(uri: string, document: unknown): CompiledPolicy {
  try {
    return compilePolicy(parsePolicy(document as object));
  } catch (error) {
    // A stored document that no longer compiles must not open the gate.
    return buildFailClosedPolicy(uri, `stored document invalid: ${(error as Error).message}`);
  }
}

function compileGatewayPolicy(source: GatewayPolicyConfig): CompiledGatewayPolicy {
  const values = withGatewayPolicyDefaults(source);
  return {
    values,
    trustedServers: new Set(values.trustedServers),
    isMethodBlocked: compileNameMatcher(values.blockedMethods),
    isToolBlocked: compileNameMatcher(values.blockedTools),
    denyDestructive: values.denyDestructive,
    detectDestructive: compileDestructiveDetector({ toolPatterns: values.destructiveToolPatterns }),
    detectExfiltration: compileExfiltrationDetector({
      detectSecrets: values.exfilDetectSecrets,
      bulkExportLimit: values.exfilBulkExportLimit,
      checkDestinations: values.exfilCheckDestinations,
      allowedDomains: values.exfilAllowedDomains,
    }),
    oauthMode: values.oauthMode,
    allowedModes: new Set(values.allowedModes),
    approvalTtlMs: values.approvalTtlSeconds * 1000,
    maxDelegationDepth: values.maxDelegationDepth,
    requireAgentIdentity: values.requireAgentIdentity,
    toolPinning: values.toolPinning,
    approvalWaitMs: values.approvalWaitSeconds * 1000,
    proxyExecutionMode: values.proxyExecutionMode,
    proxyModeHeader: values.proxyModeHeader,
    // Stored by a service that validated them; a list that fails the rule now rejects the
    // tenant's new configuration (it keeps serving its last good one) rather than count wrongly.
    limits: compileLimits(usageLimitsRule.parse(values.limits)),
  };
}

const NO_PIN_OBSERVATIONS: PinObservations = { observed: () => undefined };

function compileServer(
  tenant: TenantConfig,
  server: McpServerConfig,
  mode: ToolPinningMode,
  pins: PinObservations,
): CompiledServer {
  const serverKey = `${tenant.id}/${server.serverId}`;
  const toolPins = new Map(Object.entries(server.toolPins ?? {}));
  return {
    serverId: server.serverId,
    serverKey,
    url: server.url,
    transport: server.transport,
    mockResults: new Map(Object.entries(server.mockResults)),
    toolAnnotations: new Map(Object.entries(server.toolAnnotations)),
    toolPins,
    toolVerdict(toolName: string, listedDigest?: string): ToolPinVerdict | undefined {
      const pin = toolPins.get(toolName);
      // Under first_sight a tool without an approved digest is never held: no lookup needed.
      if (mode === 'first_sight' && (pin === undefined || pin.approved === null)) return undefined;
      return pinVerdict(pin, mode, listedDigest ?? pins.observed(serverKey, toolName));
    },
    nplServer: Object.freeze({ id: server.serverId }),
  };
}

function compileAgent(tenantId: TenantId, agent: AgentConfig, kills: KillMarks): CompiledAgent {
  const killedInConfig = agent.status !== 'active';
  const id = agent.id;
  return {
    id,
    tenantId,
    name: agent.name,
    role: agent.role,
    // The snapshot's status, or a kill delta that reached the store since (kill-overlay.ts).
    get killed() {
      return killedInConfig || kills.isKilled(id);
    },
    isToolAllowed: compileAllowList(agent.allowedTools),
    publicKey: agent.publicKey,
    executionMode: agent.executionMode ?? null,
    nplAgent: Object.freeze({ id: agent.id, name: agent.name, role: agent.role }),
  };
}
