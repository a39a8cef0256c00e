// Every configuration write bumps its tenant's configVersion in the same transaction, so snapshot
// publishers notice the change (the fingerprint is the sum of versions).
import type { PrismaClient } from '../../prisma/generated/client/client.js';

type Tx = Pick<PrismaClient, 'tenant'>;

export async function bumpConfigVersion(tx: Tx, tenantId: string): Promise<void> {
  await tx.tenant.update({ where: { id: tenantId }, data: { configVersion: { increment: 1 } } });
}
