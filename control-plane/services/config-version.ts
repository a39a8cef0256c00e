// Every configuration write bumps its tenant's configVersion in the same transaction, so snapshot
// publishers notice the change (the fingerprint is the sum of versions).
import type { PrismaClient } from '../../prisma/generated/client/client.js';

/** The bump as a Prisma operation, for `$transaction([...])` batches and interactive ones. */
export function bumpConfigVersion(prisma: Pick<PrismaClient, 'tenant'>, tenantId: string) {
  return prisma.tenant.update({
    where: { id: tenantId },
    data: { configVersion: { increment: 1 } },
  });
}
