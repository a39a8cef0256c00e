// Token revocation's writes (RFC 7009), from the data plane: the IssuedToken row gets revokedAt
// (inserted revoked when the batched recorder has not written it yet; the recorder's later insert
// then does nothing), and the tenant's configVersion is bumped in the same transaction
// (storage/config-version.ts), so the next snapshot carries the jti in revokedTokens to every
// data plane.
// Until that snapshot applies, this process refuses the jti from its own RevokedTokens set.
import { bumpConfigVersionSql } from '../../storage/config-version.js';
import type { Database } from '../../storage/database.js';
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
         (id, "tenantId", "clientId", "agentId", audience, scope, "issuedAt", "expiresAt", "revokedAt")
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
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
      ],
    );
    if (rows.length === 0) return false;
    await bumpConfigVersionSql(tx, token.tenantId, now);
    return true;
  });
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
