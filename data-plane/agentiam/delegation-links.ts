// Records the delegation links this data plane has verified (delegation_links), so the kill switch
// can revoke and count the delegations an agent issued: the gateway never signs a link — agents
// make them — so the first verification is where it learns of one. Fed by the IdentityVerifier's
// onChainVerified hook (the delegation verify route, identity on inspect, /oauth/authorize with a
// delegation_chain), it must never slow or fail a verification: recording is a synchronous
// in-memory step, written in one INSERT per interval (and on stop) by a BatchedWriter, with
// `on conflict do nothing`.
// Memory is bounded: links already recorded are remembered per process up to a capacity (oldest
// forgotten first, so at worst a link is written again, which changes nothing), and the queue
// drops what exceeds its cap while the database is away (a dropped link is recorded at its next
// verification). A link of an issuer killed before the write is written revoked, as the kill
// switch would have left it.
import type { Logger } from 'pino';
import type { ChainResult } from '../../shared/agentiam/delegation-chain.js';
import { BatchedWriter } from '../../storage/engine/batched-writer.js';
import type { Database } from '../../storage/engine/database.js';

export interface DelegationLinkRecord {
  readonly tenantId: string;
  /** The AgentDelegationCredential's id. */
  readonly id: string;
  readonly issuerAgentId: string;
  readonly subjectAgentId: string;
  readonly tools: readonly string[];
  readonly expiresAt: Date;
  readonly seenAt: Date;
}

export interface DelegationLinkRecorderOptions {
  /** Default 1000 ms. */
  readonly intervalMs?: number;
  /** Links remembered as recorded (default 100 000). */
  readonly capacity?: number;
  /** Links queued at most (default 10 000). */
  readonly maxPending?: number;
  readonly logger?: Logger;
}

/** Queued links beyond this are written at once rather than waiting for the interval. */
const FLUSH_AT = 1_000;

export class DelegationLinkRecorder {
  readonly #db: Database;
  readonly #logger: Logger | undefined;
  readonly #capacity: number;
  /** `<tenantId> <credential id>` of links queued or written, oldest first. */
  readonly #seen = new Set<string>();
  readonly #writer: BatchedWriter<DelegationLinkRecord>;

  constructor(db: Database, options: DelegationLinkRecorderOptions = {}) {
    this.#db = db;
    this.#logger = options.logger;
    this.#capacity = options.capacity ?? 100_000;
    this.#writer = new BatchedWriter({
      write: (batch) => this.#write(batch),
      intervalMs: options.intervalMs ?? 1_000,
      flushAt: FLUSH_AT,
      maxPending: options.maxPending ?? 10_000,
      logger: options.logger,
      failureMessage: 'recording delegation links failed',
      droppedMessage: 'delegation links not recorded (queue full)',
    });
  }

  /**
   * The IdentityVerifier hook: queues the links the verification accepted — all of a valid
   * chain's; of an invalid one, those before the failing hop (they passed every rule; a depth
   * failure is judged before any link is read, so it accepts none). Never throws.
   */
  readonly onChainVerified = (
    tenantId: string,
    chain: readonly unknown[],
    result: ChainResult,
  ): void => {
    try {
      const accepted = acceptedLinks(chain, result);
      if (accepted === 0) return;
      const seenAt = new Date();
      for (let i = 0; i < accepted; i++) {
        const link = linkOf(tenantId, chain[i], seenAt);
        if (link) this.#record(link);
      }
    } catch (error) {
      this.#logger?.warn({ err: error }, 'recording a delegation link failed');
    }
  };

  /** Writes every queued link; resolves once they are committed. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /** Stops the timer and writes what is queued; a failed last write is logged, not thrown. */
  stop(): Promise<void> {
    return this.#writer.stop();
  }

  #record(link: DelegationLinkRecord): void {
    const key = `${link.tenantId} ${link.id}`;
    if (this.#seen.has(key)) return;
    // Dropped (queue full): not remembered, so its next verification queues it again.
    if (!this.#writer.record(link)) return;
    this.#seen.add(key);
    if (this.#seen.size > this.#capacity) {
      const oldest = this.#seen.values().next().value as string;
      this.#seen.delete(oldest);
    }
  }

  async #write(batch: readonly DelegationLinkRecord[]): Promise<void> {
    try {
      await this.#db.query(
        `insert into delegation_links
           ("tenantId", id, "issuerAgentId", "subjectAgentId", tools, "expiresAt", "firstSeenAt", "revokedAt")
         select l.tenant, l.id, l.issuer, l.subject,
                array(select jsonb_array_elements_text(l.tools::jsonb)), l.expires, l.seen,
                (select a."killedAt" from agents a
                  where a.id = l.issuer and a."tenantId" = l.tenant and a.status = 'killed')
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                     $6::timestamptz[], $7::timestamptz[])
              as l(tenant, id, issuer, subject, tools, expires, seen)
         on conflict ("tenantId", id) do nothing`,
        [
          batch.map((link) => link.tenantId),
          batch.map((link) => link.id),
          batch.map((link) => link.issuerAgentId),
          batch.map((link) => link.subjectAgentId),
          batch.map((link) => JSON.stringify(link.tools)),
          batch.map((link) => link.expiresAt.toISOString()),
          batch.map((link) => link.seenAt.toISOString()),
        ],
      );
    } catch (error) {
      // Lost with this batch: forget them, so their next verification queues them again.
      for (const link of batch) this.#seen.delete(`${link.tenantId} ${link.id}`);
      throw error;
    }
  }
}

/** How many links, from the first, the verification accepted. */
function acceptedLinks(chain: readonly unknown[], result: ChainResult): number {
  if (result.valid) return chain.length;
  const failure = result.failure;
  if (failure === null || failure.code === 'DELEGATION_DEPTH_EXCEEDED') return 0;
  // Hop 0 is the root, hop i is chain[i - 1]: the hops before the failing one are accepted.
  return Math.max(0, Math.min(chain.length, failure.hop - 1));
}

/** The row of an accepted link; undefined for a shape the rules would not have accepted. */
function linkOf(tenantId: string, link: unknown, seenAt: Date): DelegationLinkRecord | undefined {
  if (link === null || typeof link !== 'object') return undefined;
  const { id, expirationDate, credentialSubject } = link as Record<string, unknown>;
  if (credentialSubject === null || typeof credentialSubject !== 'object') return undefined;
  const { agentId, delegatorAgentId, permittedTools } = credentialSubject as Record<
    string,
    unknown
  >;
  const expiresAt = typeof expirationDate === 'string' ? new Date(expirationDate) : undefined;
  if (
    typeof id !== 'string' ||
    typeof agentId !== 'string' ||
    typeof delegatorAgentId !== 'string' ||
    !Array.isArray(permittedTools) ||
    !permittedTools.every((tool) => typeof tool === 'string') ||
    expiresAt === undefined ||
    Number.isNaN(expiresAt.getTime())
  ) {
    return undefined;
  }
  return {
    tenantId,
    id,
    issuerAgentId: delegatorAgentId,
    subjectAgentId: agentId,
    tools: permittedTools as string[],
    expiresAt,
    seenAt,
  };
}
