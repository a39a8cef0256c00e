// The tenant's gateway policy (spec §1.7, §2.5): a change is validated field by field with the
// fields' rules (shared/gateway-policy/gateway-policy-fields.ts), so an operator learns every wrong
// field at once, then stored whole and published with the next snapshot. An operator's change
// (updateGatewayPolicyAsOperator) is audited once committed; the caller publishes. A valid change
// may still carry warnings (shared/gateway-policy/gateway-policy-warnings.ts): they are returned,
// never a reason to refuse, since registering the server after trusting it is a normal order.
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import {
  type GatewayPolicyPatch,
  parseGatewayPolicyPatch,
} from '../../shared/gateway-policy/gateway-policy-fields.js';
import {
  findUnregisteredTrustedServers,
  type GatewayPolicyWarning,
} from '../../shared/gateway-policy/gateway-policy-warnings.js';
import type { Database } from '../../storage/engine/database.js';
import { bumpConfigVersion } from '../../storage/tables/config-version.js';
import {
  auditOperatorChange,
  type OperatorChange,
  type OperatorChangeDependencies,
} from './operator-audit.js';

export type { GatewayPolicyPatch };

export async function updateGatewayPolicy(
  db: Database,
  tenantId: string,
  patch: GatewayPolicyPatch,
  updatedBy: string,
): Promise<readonly GatewayPolicyWarning[]> {
  const parsed = parseGatewayPolicyPatch(patch);
  if (!parsed.ok) {
    const { issues } = parsed;
    throw gatewayError(
      'REQUEST_INVALID',
      { problem: issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ') },
      { details: { issues } },
    );
  }
  // As parsed: list items carry their defaults (a limit's omitted servers is []).
  const data = { ...parsed.patch, updatedBy };
  await db.prisma.$transaction([
    db.prisma.gatewayPolicy.update({
      where: { tenantId },
      data: Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)),
    }),
    bumpConfigVersion(db.prisma, tenantId),
  ]);
  if (patch.trustedServers === undefined) return [];
  const servers = await db.prisma.mcpServer.findMany({
    where: { tenantId },
    select: { serverId: true },
    orderBy: { serverId: 'asc' },
  });
  return findUnregisteredTrustedServers(
    patch.trustedServers,
    servers.map((server) => server.serverId),
  );
}

/**
 * An operator's change of the tenant's gateway policy: stored as updateGatewayPolicy does (with
 * the actor as updatedBy), then audited as gateway_policy.updated naming the fields of `patch`;
 * answers the change's warnings.
 */
export async function updateGatewayPolicyAsOperator(
  deps: OperatorChangeDependencies,
  input: OperatorChange & { readonly patch: GatewayPolicyPatch },
): Promise<readonly GatewayPolicyWarning[]> {
  const warnings = await updateGatewayPolicy(deps.db, input.tenantId, input.patch, input.actor);
  await auditOperatorChange(
    deps.audit,
    input,
    AUDIT_ACTIONS.GATEWAY_POLICY_UPDATED,
    { type: 'gateway_policy', id: input.tenantId },
    { fields: Object.keys(input.patch) },
  );
  return warnings;
}
