// Reads the whole configuration from the database into one ConfigSnapshot. One query per table
// (not per tenant), so a large installation costs a handful of round trips; revoked keys and
// expired or retired material are left out here, so the data plane never has to filter them.
// Before the snapshot is handed out, it is checked for consistency and the problems go, grouped
// per tenant, to the caller's `onProblems`. It is handed out anyway: rejection is per tenant and
// happens where the last good compiled state lives, in each data plane's store (this process's
// included), which runs the same check. Reading the rows is where their ids get their brands.

import { Prisma } from '../../prisma/generated/client/client.js';
import {
  GATEWAY_POLICY_DEFAULTS,
  GATEWAY_POLICY_FIELD_NAMES,
  type GatewayPolicyValues,
} from '../../shared/gateway-policy/gateway-policy-fields.js';
import { encodeEd25519PublicKey } from '../../shared/identity/ed25519-multibase.js';
import { asAgentId, asServerId, asTenantId } from '../../shared/ids.js';
import { isRecord } from '../../shared/json/is-record.js';
import { RETIRED_TOKEN_KEY_RETENTION_SECONDS } from '../../shared/oauth/token-lifetimes.js';
import {
  type AgentStatus,
  type CaKeyStatus,
  type ConfigSnapshot,
  checkSnapshotConsistency,
  EXECUTION_MODES,
  type ExecutionMode,
  type GatewayPolicyConfig,
  groupProblemsByTenant,
  type OAuthClientAuthMethod,
  type SnapshotProblem,
  type TenantConfig,
} from '../../shared/snapshot/index.js';
import { readStoredAnnotations } from '../../shared/tools/tool-definitions.js';
import { isToolPinningMode, type ToolPinDigests } from '../../shared/tools/tool-pins.js';
import type { Database } from '../../storage/engine/database.js';
import { readLatestKillSeq } from '../../storage/tables/kill-deltas.js';

/** A cheap fingerprint of the configuration: it changes whenever any tenant's config changes. */
export async function readConfigFingerprint(db: Database): Promise<string> {
  // Token signing keys belong to no tenant: a data plane registering its key changes the JWKS
  // every data plane serves, so the keys take part in the fingerprint too: the served ones (the
  // count falls when a retired key's retention ends), how many are retired, the newest.
  const rows = await db.query<{ n: number; total: string; keys: string }>(
    `select count(*)::int as n, coalesce(sum("configVersion"), 0)::text as total,
       (select count(*)::text || ':' || count("retiredAt")::text || ':' ||
               coalesce(max("createdAt")::text, '')
          from token_signing_keys where "retiredAt" is null or "retiredAt" > $1) as keys
     from tenants`,
    [retiredKeysServedAfter(new Date())],
  );
  return `${rows[0]?.n ?? 0}:${rows[0]?.total ?? '0'}:${rows[0]?.keys ?? ''}`;
}

/** A key retired after this instant still verifies live tokens (shared/oauth/token-lifetimes.ts). */
function retiredKeysServedAfter(now: Date): Date {
  return new Date(now.getTime() - RETIRED_TOKEN_KEY_RETENTION_SECONDS * 1000);
}

export interface BuildSnapshotOptions {
  /** Called once per built snapshot that has problems, with them grouped by tenant id. */
  readonly onProblems?: (
    problems: ReadonlyMap<string, readonly SnapshotProblem[]>,
    version: number,
  ) => void;
}

export async function buildConfigSnapshot(
  db: Database,
  version: number,
  options: BuildSnapshotOptions = {},
): Promise<ConfigSnapshot> {
  const now = new Date();
  const { prisma } = db;
  // Read before the agents, never beside them: kills commit in seq order, so every kill up to
  // this seq is already in the agents read next (status killed). A data plane resumes kill
  // deltas after it; a later kill is at worst sent twice, never missed.
  const killsThrough = await readLatestKillSeq(db);
  const [
    tenants,
    policies,
    keys,
    servers,
    agents,
    versions,
    caKeys,
    statusLists,
    oauthClients,
    revokedTokens,
    tokenSigningKeys,
    toolPins,
    auditKeys,
  ] = await Promise.all([
    prisma.tenant.findMany({ orderBy: { name: 'asc' } }),
    prisma.gatewayPolicy.findMany(),
    prisma.apiKey.findMany({
      where: { revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    }),
    prisma.mcpServer.findMany({ orderBy: { serverId: 'asc' } }),
    prisma.agent.findMany({ orderBy: { createdAt: 'asc' } }),
    prisma.nplPolicyVersion.findMany({ orderBy: [{ name: 'asc' }, { publishedAt: 'asc' }] }),
    // Public halves only: the sealed private key never leaves the control plane.
    prisma.tenantSigningKey.findMany({
      where: {
        purpose: 'agentiam-ca',
        OR: [{ status: 'active' }, { status: 'retired', resolvableUntil: { gt: now } }],
      },
      select: { id: true, tenantId: true, publicKey: true, status: true, resolvableUntil: true },
      orderBy: { createdAt: 'desc' },
    }),
    prisma.statusList.findMany({
      where: { credential: { not: Prisma.DbNull } },
      select: { id: true, tenantId: true, version: true, credential: true },
      orderBy: { id: 'asc' },
    }),
    prisma.oAuthClient.findMany({ where: { revokedAt: null }, orderBy: { createdAt: 'asc' } }),
    prisma.issuedToken.findMany({
      where: { revokedAt: { not: null }, expiresAt: { gt: now } },
      select: { id: true, tenantId: true, expiresAt: true },
      orderBy: { id: 'asc' },
    }),
    // Signing keys newest first, then retired ones whose tokens may still be alive.
    prisma.tokenSigningKey.findMany({
      where: { OR: [{ retiredAt: null }, { retiredAt: { gt: retiredKeysServedAfter(now) } }] },
      orderBy: [{ retiredAt: { sort: 'desc', nulls: 'first' } }, { createdAt: 'desc' }],
    }),
    prisma.toolDefinitionPin.findMany({
      select: {
        tenantId: true,
        serverId: true,
        toolName: true,
        approvedDigest: true,
        observedDigest: true,
      },
      orderBy: [{ serverId: 'asc' }, { toolName: 'asc' }],
    }),
    // The audit checkpoint keys' public halves, for every tenant's DID document.
    prisma.auditSigningKey.findMany({
      select: { id: true, publicKey: true, status: true },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    }),
  ]);
  const auditKeyConfigs = auditKeys.map((key) => ({
    id: key.id,
    publicKeyMultibase: encodeEd25519PublicKey(Buffer.from(key.publicKey, 'base64')),
    status: key.status as CaKeyStatus,
  }));
  const byTenant = <T extends { tenantId: string }>(rows: readonly T[]) => {
    const map = new Map<string, T[]>();
    for (const row of rows) {
      const list = map.get(row.tenantId);
      if (list) list.push(row);
      else map.set(row.tenantId, [row]);
    }
    return map;
  };
  const policyOf = new Map(policies.map((policy) => [policy.tenantId, policy]));
  const keysOf = byTenant(keys);
  const serversOf = byTenant(servers);
  const agentsOf = byTenant(agents);
  const versionsOf = byTenant(versions);
  const caKeysOf = byTenant(caKeys);
  const statusListsOf = byTenant(statusLists);
  const oauthClientsOf = byTenant(oauthClients);
  const revokedTokensOf = byTenant(revokedTokens);
  const pinsOf = new Map<string, Record<string, ToolPinDigests>>();
  for (const pin of toolPins) {
    const key = `${pin.tenantId}/${pin.serverId}`;
    let pins = pinsOf.get(key);
    if (pins === undefined) {
      pins = {};
      pinsOf.set(key, pins);
    }
    pins[pin.toolName] = { approved: pin.approvedDigest, observed: pin.observedDigest };
  }

  const tenantConfigs: TenantConfig[] = tenants.map((tenant) => {
    const policy = policyOf.get(tenant.id);
    return {
      id: asTenantId(tenant.id),
      name: tenant.name,
      configVersion: tenant.configVersion,
      gatewayPolicy: policy ? toGatewayPolicyConfig(policy) : CLOSED_POLICY,
      apiKeys: (keysOf.get(tenant.id) ?? []).map((key) => ({
        id: key.id,
        prefix: key.prefix,
        secretHash: key.secretHash,
        scopes: key.scopes,
        expiresAt: key.expiresAt?.toISOString() ?? null,
      })),
      servers: (serversOf.get(tenant.id) ?? []).map((server) => ({
        serverId: asServerId(server.serverId),
        url: server.url,
        transport: server.transport,
        mockResults: asRecord(server.mockResults),
        toolAnnotations: readStoredAnnotations(server.toolAnnotations),
        toolPins: pinsOf.get(`${tenant.id}/${server.serverId}`) ?? {},
      })),
      agents: (agentsOf.get(tenant.id) ?? []).map((agent) => ({
        id: asAgentId(agent.id),
        name: agent.name,
        role: agent.role,
        status: agent.status as AgentStatus,
        allowedTools: agent.allowedTools,
        mcpAudiences: agent.mcpAudiences,
        publicKey: agent.publicKey,
        executionMode: asExecutionMode(agent.executionMode),
      })),
      policies: (versionsOf.get(tenant.id) ?? []).map((row) => ({
        name: row.name,
        version: row.version,
        contentHash: row.contentHash,
        document: row.document,
      })),
      identity: {
        caKeys: (caKeysOf.get(tenant.id) ?? []).map((key) => ({
          id: key.id,
          publicKeyMultibase: key.publicKey,
          status: key.status as CaKeyStatus,
          resolvableUntil: key.resolvableUntil?.toISOString() ?? null,
        })),
        statusLists: (statusListsOf.get(tenant.id) ?? []).map((list) => ({
          id: list.id,
          version: list.version,
          credential: asRecord(list.credential),
        })),
        ...(auditKeyConfigs.length === 0 ? {} : { auditKeys: auditKeyConfigs }),
      },
      oauthClients: (oauthClientsOf.get(tenant.id) ?? []).map((client) => ({
        id: client.id,
        agentId: asAgentId(client.agentId),
        secretHash: client.secretHash,
        authMethod: client.authMethod as OAuthClientAuthMethod,
        grantTypes: client.grantTypes,
        audiences: client.audiences,
        redirectUris: client.redirectUris,
      })),
      revokedTokens: (revokedTokensOf.get(tenant.id) ?? []).map((token) => ({
        jti: token.id,
        expiresAt: token.expiresAt.toISOString(),
      })),
    };
  });
  const snapshot: ConfigSnapshot = {
    version,
    builtAt: now.toISOString(),
    killsThrough,
    tenants: tenantConfigs,
    tokenSigningKeys: tokenSigningKeys.map((key) => ({
      kid: key.id,
      publicJwk: asRecord(key.publicJwk),
      ...(key.retiredAt === null ? {} : { retiredAt: key.retiredAt.toISOString() }),
    })),
  };
  if (options.onProblems) {
    const problems = checkSnapshotConsistency(snapshot);
    if (problems.length > 0) options.onProblems(groupProblemsByTenant(problems), version);
  }
  return snapshot;
}

type GatewayPolicyRow = Awaited<
  ReturnType<Database['prisma']['gatewayPolicy']['findMany']>
>[number];

function toGatewayPolicyConfig(row: GatewayPolicyRow): GatewayPolicyConfig {
  // Each policy field is the column of its name, holding the field's values (enumerations as
  // text; tests/shared/gateway-policy/ checks the types agree): the service stores only values
  // the fields' rules accept. The pinning and proxy modes read anything else as their default.
  const stored = Object.fromEntries(
    GATEWAY_POLICY_FIELD_NAMES.map((field) => [field, row[field]]),
  ) as unknown as GatewayPolicyValues;
  return {
    ...stored,
    toolPinning: isToolPinningMode(row.toolPinning)
      ? row.toolPinning
      : GATEWAY_POLICY_DEFAULTS.toolPinning,
    proxyExecutionMode:
      asExecutionMode(row.proxyExecutionMode) ?? GATEWAY_POLICY_DEFAULTS.proxyExecutionMode,
  };
}

/** A stored mode, or null when it is none (the service lets only valid ones in). */
function asExecutionMode(value: string | null): ExecutionMode | null {
  return (EXECUTION_MODES as readonly (string | null)[]).includes(value)
    ? (value as ExecutionMode)
    : null;
}

/**
 * A tenant without a gateway policy row trusts no server: fail closed, never open. Every field
 * is given (not left to its default), so a new field needs its own fail-closed value here.
 */
const CLOSED_POLICY: GatewayPolicyValues = {
  trustedServers: [],
  limits: [],
  blockedMethods: ['*'],
  blockedTools: ['*'],
  denyDestructive: true,
  destructiveToolPatterns: [],
  exfilDetectSecrets: true,
  exfilBulkExportLimit: 0,
  exfilCheckDestinations: true,
  exfilAllowedDomains: [],
  oauthMode: 'none',
  maxDelegationDepth: 0,
  requireAgentIdentity: true,
  pinnedPolicies: [],
  allowedModes: [],
  approvalTtlSeconds: 0,
  toolPinning: 'approved_only',
  approvalWaitSeconds: 0,
  proxyExecutionMode: 'production',
  proxyModeHeader: false,
};

function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
