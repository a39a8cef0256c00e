// Every configuration write bumps its tenant's configVersion in the same transaction, so snapshot
// publishers notice the change (the fingerprint is the sum of versions). The one place that says
// how: control-plane services and data-plane writes (learnt tool definitions, token revocations)
// both bump through here.
import type { PrismaClient } from '../../prisma/generated/client/client.js';
import type { SqlExecutor } from '../engine/database.js';

/** The bump as a Prisma operation, for `$transaction([...])` batches and interactive ones. */
export function bumpConfigVersion(prisma: Pick<PrismaClient, 'tenant'>, tenantId: string) {
  return prisma.tenant.update({
    where: { id: tenantId },
    data: { configVersion: { increment: 1 } },
  });
}

/** The same bump in SQL, for a transaction of `Database.transaction`. */
export async function bumpConfigVersionSql(
  tx: SqlExecutor,
  tenantId: string,
  now = new Date(),
): Promise<void> {
  await tx.query(
    `update tenants set "configVersion" = "configVersion" + 1, "updatedAt" = $2 where id = $1`,
    [tenantId, now.toISOString()],
  );
}
