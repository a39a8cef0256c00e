// Checks a ConfigSnapshot's references and ownership before it is served, the way go-control-plane
// checks a snapshot before publishing it. Every problem is collected (not just the first), each
// with its tenant and its path from the snapshot root, so the control plane can report them per
// tenant and a data plane can reject exactly the tenants concerned.
//
// Two kinds of problem, told apart by `rejectsTenant`:
// - an id claimed twice (a tenant id, agent id, API key id or prefix across the whole snapshot;
//   an agent public key, a server id or policy version inside one tenant) makes the compiled
//   indexes ambiguous, so a key or agent could act in another tenant: the tenants involved are
//   rejected. Public keys are per tenant: the credential's tenant binds a key to its tenant, so two
//   tenants may hold the same key and neither learns the other has it;
// - a dangling reference (a pin to a policy that is neither bundled nor published, a trusted
//   server that is not registered) is reported but served: the data plane answers such requests
//   fail closed, while keeping the tenant's older configuration could keep a laxer one serving.
import type { TenantId } from '../ids.js';
import { BUNDLED_POLICIES, NPL_URI_SCHEME } from '../npl/index.js';
import type { ConfigSnapshot, TenantConfig } from './types.js';

export const SNAPSHOT_PROBLEM_CODES = [
  'TENANT_ID_REPEATED',
  'ID_CLAIMED_TWICE',
  'PIN_UNRESOLVED',
  'TRUSTED_SERVER_UNREGISTERED',
] as const;
export type SnapshotProblemCode = (typeof SNAPSHOT_PROBLEM_CODES)[number];

export interface SnapshotProblem {
  readonly code: SnapshotProblemCode;
  readonly tenantId: TenantId;
  /** From the snapshot root, e.g. `['tenants', 2, 'apiKeys', 0, 'prefix']`. */
  readonly path: readonly (string | number)[];
  readonly message: string;
  /** True when the tenant's new configuration must not be served. */
  readonly rejectsTenant: boolean;
}

interface Claim {
  readonly tenantId: TenantId;
  readonly path: readonly (string | number)[];
}

const bundledUris: ReadonlySet<string> = new Set(
  BUNDLED_POLICIES.map((policy) => formatUri(policy.policyName, policy.version)),
);

/** Every consistency problem of the snapshot; empty when it is consistent. */
export function checkSnapshotConsistency(snapshot: ConfigSnapshot): SnapshotProblem[] {
  const problems: SnapshotProblem[] = [];
  const tenantIds = new Map<string, Claim[]>();
  // Ids the indexes look up across tenants: one claim each, whichever tenant makes it.
  const globalIds = new Map<string, Claim[]>();
  snapshot.tenants.forEach((tenant, index) => {
    const at = ['tenants', index] as const;
    addClaim(tenantIds, tenant.id, { tenantId: tenant.id, path: [...at, 'id'] });
    const claim = (kind: string, id: string, path: readonly (string | number)[]) =>
      addClaim(globalIds, `${kind} ${id}`, { tenantId: tenant.id, path: [...at, ...path] });
    tenant.agents.forEach((agent, i) => {
      claim('agent id', agent.id, ['agents', i, 'id']);
    });
    tenant.apiKeys.forEach((key, i) => {
      claim('API key id', key.id, ['apiKeys', i, 'id']);
      claim('API key prefix', key.prefix, ['apiKeys', i, 'prefix']);
    });
    checkTenant(tenant, at, problems);
  });
  for (const [id, claims] of tenantIds) {
    if (claims.length < 2) continue;
    for (const claim of claims) {
      problems.push(problem('TENANT_ID_REPEATED', claim, `tenant id ${id} appears twice`, true));
    }
  }
  reportClaimedTwice(globalIds, problems);
  return problems;
}

/** The problems grouped by tenant id, in the order the tenants first appear. */
export function groupProblemsByTenant(
  problems: readonly SnapshotProblem[],
): ReadonlyMap<string, readonly SnapshotProblem[]> {
  const byTenant = new Map<string, SnapshotProblem[]>();
  for (const item of problems) {
    const list = byTenant.get(item.tenantId);
    if (list) list.push(item);
    else byTenant.set(item.tenantId, [item]);
  }
  return byTenant;
}

function checkTenant(
  tenant: TenantConfig,
  at: readonly (string | number)[],
  problems: SnapshotProblem[],
): void {
  const local = new Map<string, Claim[]>();
  const published = new Set<string>();
  tenant.agents.forEach((agent, i) => {
    addClaim(local, `agent public key ${agent.publicKey}`, {
      tenantId: tenant.id,
      path: [...at, 'agents', i, 'publicKey'],
    });
  });
  tenant.servers.forEach((server, i) => {
    addClaim(local, `server id ${server.serverId}`, {
      tenantId: tenant.id,
      path: [...at, 'servers', i, 'serverId'],
    });
  });
  tenant.policies.forEach((policy, i) => {
    const uri = formatUri(policy.name, policy.version);
    published.add(uri);
    addClaim(local, `policy ${uri}`, { tenantId: tenant.id, path: [...at, 'policies', i] });
  });
  reportClaimedTwice(local, problems);

  const policyPath = [...at, 'gatewayPolicy'];
  tenant.gatewayPolicy.pinnedPolicies.forEach((uri, i) => {
    if (bundledUris.has(uri) || published.has(uri)) return;
    const claim = { tenantId: tenant.id, path: [...policyPath, 'pinnedPolicies', i] };
    problems.push(
      problem('PIN_UNRESOLVED', claim, `pinned policy ${uri} is neither bundled nor published`),
    );
  });
  const registered = new Set<string>(tenant.servers.map((server) => server.serverId));
  tenant.gatewayPolicy.trustedServers.forEach((serverId, i) => {
    if (registered.has(serverId)) return;
    const claim = { tenantId: tenant.id, path: [...policyPath, 'trustedServers', i] };
    problems.push(
      problem('TRUSTED_SERVER_UNREGISTERED', claim, `trusted server ${serverId} is not registered`),
    );
  });
}

function addClaim(claims: Map<string, Claim[]>, key: string, claim: Claim): void {
  const list = claims.get(key);
  if (list) list.push(claim);
  else claims.set(key, [claim]);
}

function reportClaimedTwice(claims: ReadonlyMap<string, Claim[]>, problems: SnapshotProblem[]) {
  for (const [key, list] of claims) {
    if (list.length < 2) continue;
    const holders = [...new Set(list.map((claim) => claim.tenantId))].join(', ');
    for (const claim of list) {
      const message = `${key} is claimed ${list.length} times (tenants ${holders})`;
      problems.push(problem('ID_CLAIMED_TWICE', claim, message, true));
    }
  }
}

function problem(
  code: SnapshotProblemCode,
  claim: Claim,
  message: string,
  rejectsTenant = false,
): SnapshotProblem {
  return { code, tenantId: claim.tenantId, path: claim.path, message, rejectsTenant };
}

// Not formatPolicyUri: a malformed name must show up as an unresolved pin here, not throw.
function formatUri(name: string, version: string): string {
  return `${NPL_URI_SCHEME}://${name}@${version}`;
}
