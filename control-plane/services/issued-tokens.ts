// Access tokens the gateway issued (IssuedToken rows, written in batches by the data plane,
// data-plane/oauth/issued-tokens.ts): operators revoke one by its jti. Only the jti and the
// claims are stored, never the token. A revocation sets revokedAt and bumps the tenant's
// configVersion in one transaction, so the next snapshot carries the jti in revokedTokens and
// introspection answers the token inactive; after the commit it is announced (`revocation.committed`,
// so every data plane refuses it before that snapshot: data-plane/remote/revocation-follower.ts)
// and audited as oauth.token_revoked with the operator as actor. The caller publishes the snapshot.
import type { IssuedToken } from '../../prisma/generated/client/client.js';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import { EVENT_TYPES, type EventBus } from '../../shared/events/index.js';
import { asTenantId } from '../../shared/ids.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import { bumpConfigVersion } from '../../storage/tables/config-version.js';

export interface IssuedTokenServiceDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  /** Where a revocation is announced, so every data plane refuses it before the next snapshot. */
  readonly events?: Pick<EventBus, 'publish'> | undefined;
}

export interface RevokeIssuedTokenInput {
  readonly tenantId: string;
  /** The token's jti (IssuedToken.id). */
  readonly id: string;
  readonly reason?: string | null;
  /** Who asked, as audit metadata records it (`api_key:<id>`). */
  readonly actor: string;
}

/**
 * Revokes an issued token of the tenant. Revoking a revoked token changes nothing and answers
 * it as it is (`revoked: false`). NOT_FOUND when the tenant has no token with that jti.
 */
export async function revokeIssuedToken(
  deps: IssuedTokenServiceDependencies,
  input: RevokeIssuedTokenInput,
  now = new Date(),
): Promise<{ token: IssuedToken; revoked: boolean }> {
  const { tenantId, id } = input;
  const outcome = await deps.db.prisma.$transaction(async (tx) => {
    const found = await tx.issuedToken.findFirst({ where: { id, tenantId } });
    if (!found) {
      throw gatewayError('NOT_FOUND', { resource: `issued token ${id} in this tenant` });
    }
    if (found.revokedAt !== null) return { token: found, revoked: false };
    // Conditional on revokedAt null: of two concurrent revocations, one writes and audits.
    const { count } = await tx.issuedToken.updateMany({
      where: { id: found.id, revokedAt: null },
      data: { revokedAt: now },
    });
    const token = await tx.issuedToken.findUniqueOrThrow({ where: { id: found.id } });
    if (count === 0) return { token, revoked: false };
    await bumpConfigVersion(tx, tenantId);
    return { token, revoked: true };
  });
  if (outcome.revoked) {
    const { token } = outcome;
    deps.events?.publish({
      type: EVENT_TYPES.REVOCATION_COMMITTED,
      tenantId: asTenantId(tenantId),
      revocation: {
        kind: 'access_token',
        jti: token.id,
        expiresAt: Math.floor(token.expiresAt.getTime() / 1000),
      },
    });
    await deps.audit.append({
      tenantId,
      action: AUDIT_ACTIONS.OAUTH_TOKEN_REVOKED,
      resourceType: 'access_token',
      resourceId: token.id,
      metadata: {
        actorType: 'operator',
        actor: input.actor,
        clientId: token.clientId,
        agentId: token.agentId,
        audience: token.audience,
        expiresAt: token.expiresAt.toISOString(),
        ...(input.reason ? { reason: input.reason } : {}),
      },
    });
  }
  return outcome;
}
