// What a data plane reads when it hears that a credential was revoked (the `revocation.committed`
// event carries its id, never rows): the credential's status list as re-signed with its bit set,
// and the unexpired access tokens revoked with it. Tenant-scoped: an id of another tenant reads
// nothing.
import { Prisma } from '../../prisma/generated/client/client.js';
import { isRecord } from '../../shared/json/is-record.js';
import type { StatusListConfig } from '../../shared/snapshot/index.js';
import type { Database } from '../engine/database.js';

export interface CredentialRevocation {
  /** The credential's signed status list (absent when it was never signed). */
  readonly statusList: StatusListConfig | undefined;
  /** Unexpired tokens revoked with the credential: jti and expiry (epoch ms). */
  readonly tokens: readonly { readonly jti: string; readonly expiresAtMs: number }[];
}

/** The revocation of a tenant's credential as stored; undefined when it is not revoked (or unknown). */
export async function readCredentialRevocation(
  db: Database,
  tenantId: string,
  credentialId: string,
  now = new Date(),
): Promise<CredentialRevocation | undefined> {
  const credential = await db.prisma.identityCredential.findFirst({
    where: { id: credentialId, tenantId, revokedAt: { not: null } },
    select: { statusListId: true },
  });
  if (!credential) return undefined;
  const [list, tokens] = await Promise.all([
    db.prisma.statusList.findFirst({
      where: { id: credential.statusListId, tenantId, credential: { not: Prisma.DbNull } },
      select: { id: true, version: true, credential: true },
    }),
    db.prisma.issuedToken.findMany({
      where: { tenantId, credentialId, revokedAt: { not: null }, expiresAt: { gt: now } },
      select: { id: true, expiresAt: true },
    }),
  ]);
  return {
    statusList:
      list && isRecord(list.credential)
        ? { id: list.id, version: list.version, credential: list.credential }
        : undefined,
    tokens: tokens.map((token) => ({ jti: token.id, expiresAtMs: token.expiresAt.getTime() })),
  };
}
