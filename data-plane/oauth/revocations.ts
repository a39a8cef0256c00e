// Token revocation's writes (RFC 7009), from the data plane: the IssuedToken row gets revokedAt
// (inserted revoked when the batched recorder has not written it yet; the recorder's later insert
// then does nothing), and the tenant's configVersion is bumped in the same transaction, so the
// next snapshot carries the jti in revokedTokens to every data plane. The bump is the control
// plane's (control-plane/services/config-version.ts) in plain SQL: the planes share no code.
// Until that snapshot applies, this process refuses the jti from its own RevokedTokens set.
import type { Database } from '../../storage/database.js';

export interface RevokedToken {
  readonly jti: string;
  readonly tenantId: string;
  /** null for a gateway-minted token. */
  readonly clientId: string | null;
  readonly agentId: string;
  readonly audience: string;
  readonly scope: string;
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** Epoch seconds. */
  readonly expiresAt: number;
}

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
    await tx.query(
      `update tenants set "configVersion" = "configVersion" + 1, "updatedAt" = $2 where id = $1`,
      [token.tenantId, now.toISOString()],
    );
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
