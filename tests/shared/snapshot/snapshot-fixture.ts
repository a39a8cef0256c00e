// Plain ConfigSnapshot builders for the snapshot tests: a consistent tenant by default, so each
// test changes only the field it is about.

import { asAgentId, asServerId, asTenantId } from '../../../shared/ids.js';
import type {
  ConfigSnapshot,
  GatewayPolicyConfig,
  PolicyVersionConfig,
  TenantConfig,
} from '../../../shared/snapshot/index.js';

const OPEN_POLICY: GatewayPolicyConfig = {
  trustedServers: ['files'],
  blockedMethods: [],
  blockedTools: [],
  denyDestructive: false,
  destructiveToolPatterns: [],
  exfilDetectSecrets: false,
  exfilBulkExportLimit: null,
  exfilCheckDestinations: false,
  exfilAllowedDomains: [],
  oauthMode: 'none',
  maxDelegationDepth: 3,
  requireAgentIdentity: false,
  pinnedPolicies: [],
  allowedModes: ['production', 'simulation', 'shadow'],
  approvalTtlSeconds: 300,
};

/** A consistent tenant named after `id`: one server (files), one agent, one API key. */
export function makeTenant(
  id: string,
  patch: Partial<Omit<TenantConfig, 'gatewayPolicy'>> & {
    readonly gatewayPolicy?: Partial<GatewayPolicyConfig>;
  } = {},
): TenantConfig {
  const { gatewayPolicy, ...rest } = patch;
  return {
    id: asTenantId(id),
    name: id,
    configVersion: 1,
    apiKeys: [
      { id: `${id}-key`, prefix: `${id}-prefix`, secretHash: 'h', scopes: [], expiresAt: null },
    ],
    servers: [
      {
        serverId: asServerId('files'),
        url: 'http://files',
        transport: 'http',
        mockResults: {},
        toolAnnotations: {},
      },
    ],
    agents: [
      {
        id: asAgentId(`${id}-agent`),
        name: 'agent',
        role: 'worker',
        status: 'active',
        allowedTools: ['*'],
        mcpAudiences: [],
        publicKey: `${id}-public-key`,
      },
    ],
    policies: [],
    identity: { caKeys: [], statusLists: [] },
    oauthClients: [],
    revokedTokens: [],
    ...rest,
    gatewayPolicy: { ...OPEN_POLICY, ...gatewayPolicy },
  };
}

/** A published policy version blocking one tool; `contentHash` stands for the document. */
export function makePolicyVersion(
  name: string,
  version: string,
  blockedTool: string,
): PolicyVersionConfig {
  return {
    name,
    version,
    contentHash: `${name}@${version}:${blockedTool}`,
    document: {
      version,
      policyName: name,
      description: `blocks ${blockedTool}`,
      targetAgents: ['*'],
      rules: [
        {
          ruleId: 'block_tool',
          action: 'BLOCK',
          condition: `tool.name == '${blockedTool}'`,
          alertSeverity: 'CRITICAL',
        },
      ],
    },
  };
}

export function makeSnapshot(version: number, tenants: readonly TenantConfig[]): ConfigSnapshot {
  return { version, builtAt: new Date(0).toISOString(), tenants, tokenSigningKeys: [] };
}
