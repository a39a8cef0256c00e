// Compiled snapshot fixtures for the pipeline's unit tests: plain ConfigSnapshot objects compiled
// with the data plane's own compiler (compileSnapshot), and calls parsed by the inspect route's own
// parser (parseInspectRequest), so runPipeline sees exactly what it sees in the gateway, without a
// database, a socket or an upstream. One tenant, `acme`, carries every gateway-policy step of
// DESIGN.md §4; its variants change only the field a test is about.

import type { InspectRequest } from '../../../data-plane/governance/request.js';
import { parseInspectRequest } from '../../../data-plane/governance/request.js';
import { DEFAULT_DESTRUCTIVE_TOOL_PATTERNS } from '../../../data-plane/inspection/index.js';
import {
  type CompiledAgent,
  type CompiledServer,
  type CompiledTenant,
  compileSnapshot,
} from '../../../data-plane/store/compiled-snapshot.js';
import { hashApiKeySecret, parseApiKey } from '../../../shared/identity/api-keys.js';
import { asAgentId, asServerId } from '../../../shared/ids.js';
import type {
  AgentConfig,
  GatewayPolicyConfig,
  McpServerConfig,
  PolicyVersionConfig,
  TenantConfig,
} from '../../../shared/snapshot/index.js';
import { makeSnapshot, makeTenant } from '../../shared/snapshot/snapshot-fixture.js';

export const TENANT_ID = 'acme';
/** The tenant's pinned policy: one rule per deciding action, keyed on `args.flag`. */
export const TABLE_RULES = 'svc://table-rules@1.0.0';
/** Published but not pinned: only a request naming it brings it in. */
export const EXTRA_RULES = 'svc://extra-rules@1.0.0';
export const UNPUBLISHED = 'svc://never-published@1.0.0';

/** API keys of `acme` (the §4 authentication row): agents:execute, and agents:manage only. */
export const EXECUTE_KEY = `agk_acmeexecute1_${'E'.repeat(43)}`;
export const MANAGE_KEY = `agk_acmemanage01_${'M'.repeat(43)}`;

function policyVersion(name: string, document: Record<string, unknown>): PolicyVersionConfig {
  return { name, version: '1.0.0', contentHash: `${name}@1.0.0`, document };
}

const TABLE_RULES_VERSION = policyVersion('table-rules', {
  version: '1.0.0',
  policyName: 'table-rules',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'block_flagged',
      action: 'BLOCK',
      condition: "args.flag == 'npl-block'",
      alertSeverity: 'CRITICAL',
    },
    {
      ruleId: 'hold_for_human',
      action: 'REQUIRE_HUMAN',
      condition: "args.flag == 'needs-human'",
      alertSeverity: 'MEDIUM',
    },
    {
      ruleId: 'simulate_flagged',
      action: 'SIMULATE',
      condition: "args.flag == 'simulate'",
      alertSeverity: 'LOW',
    },
    {
      ruleId: 'hold_deep_delegation',
      action: 'REQUIRE_HUMAN',
      condition: "delegation.depth >= 2 && tool.name == 'echo'",
      alertSeverity: 'CRITICAL',
    },
  ],
});

const EXTRA_RULES_VERSION = policyVersion('extra-rules', {
  version: '1.0.0',
  policyName: 'extra-rules',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'block_what_table_rules_hold',
      action: 'BLOCK',
      condition: "args.flag == 'needs-human'",
      alertSeverity: 'MEDIUM',
    },
  ],
});

const FILES: McpServerConfig = {
  serverId: asServerId('files'),
  url: 'http://files.invalid/mcp',
  transport: 'streamable-http',
  mockResults: {},
  toolAnnotations: { tidy_up: { destructiveHint: true } },
  toolPins: {
    echo: { approved: 'digest-1', observed: 'digest-1' },
    // The upstream now describes `lookup` differently from what was approved.
    lookup: { approved: 'digest-1', observed: 'digest-2' },
  },
};

function agent(id: string, role: string, patch: Partial<AgentConfig> = {}): AgentConfig {
  return {
    id: asAgentId(id),
    name: id,
    role,
    status: 'active',
    allowedTools: ['*'],
    mcpAudiences: [],
    publicKey: `${id}-public-key`,
    ...patch,
  };
}

/**
 * `acme`: whitelists `files` (registered) and `ghost` (not registered); blocks two methods and two
 * tools (exact and `*` glob); denies destructive operations with the default patterns; checks
 * exfiltration destinations; pins table-rules. Agents: `worker` (every tool), `reader` (echo and
 * lookup only), `retired` (killed in the snapshot).
 */
export function makeAcme(
  patch: Partial<Omit<TenantConfig, 'gatewayPolicy'>> & {
    readonly gatewayPolicy?: Partial<GatewayPolicyConfig>;
  } = {},
): TenantConfig {
  const { gatewayPolicy, ...rest } = patch;
  return makeTenant(TENANT_ID, {
    apiKeys: [
      apiKey('acme-execute', EXECUTE_KEY, ['agents:execute']),
      apiKey('acme-manage', MANAGE_KEY, ['agents:manage']),
    ],
    servers: [FILES],
    agents: [
      agent('worker', 'worker'),
      agent('reader', 'reader', { allowedTools: ['echo', 'lookup'] }),
      agent('retired', 'worker', { status: 'killed' }),
    ],
    policies: [TABLE_RULES_VERSION, EXTRA_RULES_VERSION],
    ...rest,
    gatewayPolicy: {
      trustedServers: ['files', 'ghost'],
      blockedMethods: ['prompts/get', 'resources/*'],
      blockedTools: ['danger_*', 'forbidden'],
      denyDestructive: true,
      destructiveToolPatterns: DEFAULT_DESTRUCTIVE_TOOL_PATTERNS,
      exfilCheckDestinations: true,
      pinnedPolicies: [TABLE_RULES],
      ...gatewayPolicy,
    },
  });
}

function apiKey(id: string, key: string, scopes: string[]): TenantConfig['apiKeys'][number] {
  const { prefix, secret } = parseApiKey(key) as { prefix: string; secret: string };
  return { id, prefix, secretHash: hashApiKeySecret(secret), scopes, expiresAt: null };
}

/**
 * Compiles `config` alone into a snapshot and returns its tenant. Throws if the tenant was rejected
 * or a published policy did not compile (the compiler would quietly fail it closed instead).
 */
export function compileTenantFixture(config: TenantConfig = makeAcme()): CompiledTenant {
  const snapshot = compileSnapshot(makeSnapshot(1, [config]));
  const tenant = snapshot.tenants.get(config.id);
  if (snapshot.rejectedTenants.length > 0 || tenant === undefined) {
    throw new Error(`fixture tenant rejected: ${JSON.stringify(snapshot.rejectedTenants)}`);
  }
  for (const compiled of tenant.policiesByContent.values()) {
    if (compiled.policy === null)
      throw new Error(`fixture policy ${compiled.uri} does not compile`);
  }
  return tenant;
}

export function agentOf(tenant: CompiledTenant, id: string): CompiledAgent {
  const found = tenant.agents.get(id);
  if (!found) throw new Error(`fixture has no agent ${id}`);
  return found;
}

/** What the gateway passes as `server`: the registered one, or undefined for an unregistered id. */
export function serverOf(tenant: CompiledTenant, call: InspectRequest): CompiledServer | undefined {
  return tenant.servers.get(call.serverId);
}

export interface CallOptions {
  readonly agent?: string;
  readonly server?: string;
  readonly tool?: string;
  /** The JSON-RPC method; anything but tools/call sends `params` as they are. */
  readonly method?: string;
  readonly args?: Record<string, unknown>;
  readonly params?: Record<string, unknown>;
  readonly mode?: string;
  readonly policy?: string;
}

/** An inspect body as an agent sends it (a tools/call of `echo` by `worker` unless told). */
export function makeInspectBody(options: CallOptions = {}): Record<string, unknown> {
  const tool = options.tool ?? 'echo';
  const method = options.method ?? 'tools/call';
  const params =
    method === 'tools/call'
      ? { name: tool, arguments: options.args ?? { text: 'hello' } }
      : (options.params ?? {});
  return {
    agent_id: options.agent ?? 'worker',
    execution_id: 'exec-1',
    server_id: options.server ?? 'files',
    tool_name: tool,
    execution_mode: options.mode ?? 'production',
    request: { jsonrpc: '2.0', id: 1, method, params },
    ...(options.policy === undefined ? {} : { policy: options.policy }),
  };
}

/** The call as the inspect route hands it on: parsed by parseInspectRequest; throws if refused. */
export function makeCall(options: CallOptions = {}): InspectRequest {
  const parsed = parseInspectRequest(makeInspectBody(options));
  if (!parsed.ok) throw new Error(`fixture call refused: ${parsed.message}`);
  return parsed.value;
}
