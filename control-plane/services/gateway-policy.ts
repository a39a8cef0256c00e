// The tenant's gateway policy (spec §1.7, §2.5): a change is validated field by field with the
// fields' rules (shared/gateway-policy/gateway-policy-fields.ts), so an operator learns every wrong
// field at once, then stored whole and published with the next snapshot.
import { gatewayError } from '../../shared/errors/index.js';
import {
  type GatewayPolicyPatch,
  gatewayPolicyPatchIssues,
} from '../../shared/gateway-policy/gateway-policy-fields.js';
import { bumpConfigVersion } from '../../storage/config-version.js';
import type { Database } from '../../storage/database.js';

export type { GatewayPolicyPatch };

export async function updateGatewayPolicy(
  db: Database,
  tenantId: string,
  patch: GatewayPolicyPatch,
  updatedBy: string,
): Promise<void> {
  const issues = gatewayPolicyPatchIssues(patch);
  if (issues.length > 0) {
    throw gatewayError(
      'REQUEST_INVALID',
      { problem: issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ') },
      { details: { issues } },
    );
  }
  const data = { ...patch, updatedBy };
  await db.prisma.$transaction([
    db.prisma.gatewayPolicy.update({
      where: { tenantId },
      data: Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)),
    }),
    bumpConfigVersion(db.prisma, tenantId),
  ]);
}
