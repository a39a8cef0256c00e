// Token revocation's writes (RFC 7009), from the data plane: the IssuedToken row gets revokedAt
// (inserted revoked when the batched recorder has not written it yet; the recorder's later insert
// then does nothing), and the tenant's configVersion is bumped in the same transaction
// (storage/tables/config-version.ts), so the next snapshot carries the jti in revokedTokens to every
// data plane.
// Until that snapshot applies, this process refuses the jti from its own RevokedTokens set, and
// every other data plane from its own as soon as it hears the `revocation.committed` event
// published after the commit (data-plane/remote/revocation-follower.ts).
// revokeAccessToken is the one path every data-plane revocation takes (RFC 7009 by the client,
// a replayed authorization code): write, remember, audit once.
import { AUDIT_ACTIONS } from '../../shared/audit/actions.js';
import { EVENT_TYPES, type EventBus } from '../../shared/events/index.js';
import { asTenantId } from '../../shared/ids.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import { bumpConfigVersionSql } from '../../storage/tables/config-version.js';
import type { IssuedTokenRecord } from './issued-tokens.js';

/** What revocation knows of the token: the fields of its issuance record. */
export type RevokedToken = IssuedTokenRecord;

/** Marks the token revoked; false when it already was (nothing written then). */
export async function writeTokenRevocation(
  db: Database,
  token: RevokedToken,
  now = new Date(),
): Promise<boolean> {
  const at = (seconds: number) => new Date(seconds * 1000).toISOString();
  return db.transaction(async (tx) => {
    const rows = await tx.query(
      `insert into issued_tokens
         (id, "tenantId", "clientId", "agentId", audience, scope, "issuedAt", "expiresAt", "revokedAt",
          "credentialId")
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       on conflict (id) do update set "revokedAt" = excluded."revokedAt"
         where issued_tokens."revokedAt" is null
       returning id`,
      [
        token.jti,
        token.tenantId,
        token.clientId,
        token.agentId,
        token.audience,
        token.scope,
        at(token.issuedAt),
        at(token.expiresAt),
        now.toISOString(),
        token.credentialId ?? null,
      ],
    );
    if (rows.length === 0) return false;
    await bumpConfigVersionSql(tx, token.tenantId, now);
    return true;
  });
}

export interface TokenRevocationDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly revoked: RevokedTokens;
  /** Where `revocation.committed` goes, so the other data planes refuse the token at once. */
  readonly events?: Pick<EventBus, 'publish'> | undefined;
}

/**
 * Revokes a token: written (and the tenant bumped), refused by this process at once, audited as
 * oauth.token_revoked with `actor` (actorType, actor, reason…) when this call revoked it.
 */
export async function revokeAccessToken(
  deps: TokenRevocationDependencies,
  token: RevokedToken,
  actor: Readonly<Record<string, string>>,
): Promise<boolean> {
  const written = await writeTokenRevocation(deps.db, token);
  deps.revoked.add(token.jti, token.expiresAt * 1000);
  if (written) {
    deps.events?.publish({
      type: EVENT_TYPES.REVOCATION_COMMITTED,
      tenantId: asTenantId(token.tenantId),
      revocation: { kind: 'access_token', jti: token.jti, expiresAt: token.expiresAt },
    });
    await deps.audit.append({
      tenantId: token.tenantId,
      action: AUDIT_ACTIONS.OAUTH_TOKEN_REVOKED,
      resourceType: 'access_token',
      resourceId: token.jti,
      metadata: {
        ...actor,
        clientId: token.clientId,
        agentId: token.agentId,
        audience: token.audience,
        expiresAt: new Date(token.expiresAt * 1000).toISOString(),
      },
    });
  }
  return written;
}

/**
 * The jtis this process revoked, until each token expires: introspection refuses them at once,
 * before the snapshot that lists them applies. Bounded by the tokens' lifetimes (≤ 900 s).
 */
export class RevokedTokens {
  /** jti → expiry (epoch ms), in insertion order (roughly expiry order). */
  readonly #jtis = new Map<string, number>();

  add(jti: string, expiresAtMs: number, nowMs = Date.now()): void {
    for (const [old, until] of this.#jtis) {
      if (until > nowMs) break;
      this.#jtis.delete(old);
    }
    this.#jtis.set(jti, expiresAtMs);
  }

  has(jti: string): boolean {
    return this.#jtis.has(jti);
  }
}
