// Records issued access tokens (IssuedToken rows) without a database write on the request's path:
// issuance is queued in memory and written in one INSERT per interval (and on stop) by a
// BatchedWriter, like key-usage.ts. The rows are for listing and revocation; nothing that
// verifies a token reads them (introspection verifies the JWT itself), so a row written a moment
// late changes no answer.
// A row a revocation already inserted (revoked) wins: `on conflict do nothing`.
// A token obtained with an identity credential names it (credentialId); revoking the credential
// revokes such rows (control-plane/services/agentiam/credentials.ts). A row written late must
// not escape a revocation that ran in between: the batch share-locks its credentials first (so
// it waits for a revocation in flight, and a revocation waits for it), inserts a row whose
// credential is already revoked as revoked, and then bumps that tenant's configVersion so the
// next snapshot refuses the token everywhere.
import type { Logger } from 'pino';
import { BatchedWriter } from '../../storage/engine/batched-writer.js';
import type { Database } from '../../storage/engine/database.js';
import { bumpConfigVersionSql } from '../../storage/tables/config-version.js';

export interface IssuedTokenRecord {
  readonly jti: string;
  readonly tenantId: string;
  /** null for a token the gateway minted for itself to forward a call. */
  readonly clientId: string | null;
  readonly agentId: string;
  readonly audience: string;
  readonly scope: string;
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** Epoch seconds. */
  readonly expiresAt: number;
  /** The identity credential the agent proved itself with to obtain the token, if any. */
  readonly credentialId?: string | null | undefined;
}

/** Rows queued beyond this are written at once rather than waiting for the interval. */
const FLUSH_AT = 1_000;
/** Rows queued at most (while writes fail); more are dropped. */
const MAX_PENDING = 100_000;

export class IssuedTokenRecorder {
  readonly #db: Database;
  readonly #writer: BatchedWriter<IssuedTokenRecord>;

  constructor(db: Database, options: { intervalMs?: number; logger?: Logger } = {}) {
    this.#db = db;
    // While the database is away the queue must not grow without bound: the rows are for listing
    // (revocation inserts its own), so beyond the cap new ones are dropped, and counted.
    this.#writer = new BatchedWriter({
      write: (batch) => this.#write(batch),
      intervalMs: options.intervalMs ?? 1_000,
      flushAt: FLUSH_AT,
      maxPending: MAX_PENDING,
      logger: options.logger,
      failureMessage: 'recording issued access tokens failed',
      droppedMessage: 'issued access tokens not recorded',
    });
  }

  record(token: IssuedTokenRecord): void {
    this.#writer.record(token);
  }

  /** Writes every queued row; resolves once they are committed. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /** Stops the timer and writes what is queued; a failed last write is logged, not thrown. */
  stop(): Promise<void> {
    return this.#writer.stop();
  }

  async #write(batch: readonly IssuedTokenRecord[]): Promise<void> {
    const seconds = (s: number) => new Date(s * 1000).toISOString();
    const credentialIds = [
      ...new Set(batch.flatMap((t) => (t.credentialId ? [t.credentialId] : []))),
    ];
    const now = new Date();
    const revokedTenants = await this.#db.transaction(async (tx) => {
      if (credentialIds.length > 0) {
        await tx.query('select id from identity_credentials where id = any($1::text[]) for share', [
          credentialIds,
        ]);
      }
      const revoked = await tx.query<{ tenantId: string; revokedAt: Date | null }>(
        `insert into issued_tokens (id, "tenantId", "clientId", "agentId", audience, scope, "issuedAt",
                                    "expiresAt", "credentialId", "revokedAt")
         select t.id, t.tenant, t.client, t.agent, t.audience, t.scope, t.issued, t.expires,
                t.credential,
                case when exists (select 1 from identity_credentials c
                                   where c.id = t.credential and c."tenantId" = t.tenant
                                     and c."revokedAt" is not null)
                     then $10::timestamptz end
           from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                       $7::timestamptz[], $8::timestamptz[], $9::text[])
                as t(id, tenant, client, agent, audience, scope, issued, expires, credential)
         on conflict (id) do nothing
         returning "tenantId", "revokedAt"`,
        [
          batch.map((t) => t.jti),
          batch.map((t) => t.tenantId),
          batch.map((t) => t.clientId),
          batch.map((t) => t.agentId),
          batch.map((t) => t.audience),
          batch.map((t) => t.scope),
          batch.map((t) => seconds(t.issuedAt)),
          batch.map((t) => seconds(t.expiresAt)),
          batch.map((t) => t.credentialId ?? null),
          now.toISOString(),
        ],
      );
      return new Set(revoked.filter((row) => row.revokedAt !== null).map((row) => row.tenantId));
    });
    // After the commit, not inside it: a credential revocation holds the tenant's row while it
    // waits for this batch's share locks, so bumping the tenant in here could deadlock with it.
    for (const tenantId of revokedTenants) await bumpConfigVersionSql(this.#db, tenantId, now);
  }
}
