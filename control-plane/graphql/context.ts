// The per-request GraphQL context: the services' dependencies and the caller, authenticated once
// per request. The key check is injected (`authenticate`): the process that composes the planes
// gives the data plane's check against the in-memory snapshot (the same keys, hashes and expiry
// inspect uses), so a revoked key stops working here as soon as the snapshot without it applies.

import type { Egress } from '../../shared/egress/index.js';
import type { EventBus } from '../../shared/events/index.js';
import type { PublicUrl } from '../../shared/public-url.js';
import type { Database } from '../../storage/engine/database.js';
import type { KillAnswer, KillTarget } from '../../storage/tables/agent-kills.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import type { AuditCheckpointer } from '../audit/checkpointer.js';
import type { AuditSinkRunner } from '../audit/sinks.js';
import type { KeyCustody } from '../services/agentiam/custody.js';
import type { SnapshotPublisher } from '../snapshot/publisher.js';
import type { ToolRefresher } from '../tools/refresher.js';

/** What the resolvers need besides the caller; one object per server, shared by requests. */
export interface GraphQLDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  /**
   * The caller a request's `Authorization` header presents; throws AUTH_INVALID_API_KEY (401,
   * answered by the app's error handler before GraphQL runs, like every REST route).
   */
  readonly authenticate: (authorization: string | undefined) => Caller;
  /**
   * Calls `listener` whenever the keys `authenticate` checks against may have changed (each
   * applied snapshot); returns its removal. Open subscriptions are authenticated again then.
   */
  readonly onKeysChanged?: ((listener: () => void) => () => void) | undefined;
  readonly publisher: Pick<SnapshotPublisher, 'publishNow'>;
  /** Learns a registered or changed server's tool definitions, waiting a bounded time. */
  readonly tools: Pick<ToolRefresher, 'refreshAfterChange'>;
  /** The egress policy and resolver: a server URL it forbids is refused at registration. */
  readonly egress: Egress;
  /** Approval and audit events: published by mutations, streamed by subscriptions. */
  readonly events: EventBus;
  /** The tenant CA keys' custodian: signs credentials and status lists (AgentIAM). */
  readonly keyCustody: KeyCustody;
  /** The gateway's public base URL: the base of status-list URLs in issued credentials. */
  readonly publicUrl: PublicUrl;
  /**
   * The kill switch (killAgent): the receiver of the data plane's code, injected by the
   * composition like `authenticate`. Always given by runtime/gateway-runtime.ts.
   */
  readonly killAgent?: KillAgent | undefined;
  /**
   * Writes the in-process data plane's decision tally now (runtime of `start`): decisionStats
   * calls it first, so it sees every decision this process made before the query.
   */
  readonly flushDecisionStats?: (() => Promise<void>) | undefined;
  /** Cuts signed audit checkpoints (absent where nothing signs: then a cut is refused). */
  readonly auditCheckpoints?: Pick<AuditCheckpointer, 'cut'> | undefined;
  /** The configured checkpoint sinks (absent: none). */
  readonly auditSinks?: Pick<AuditSinkRunner, 'sinks'> | undefined;
}

/** Kills an agent of the tenant and answers as the REST kill does (docs/kill-switch.md). */
export type KillAgent = (input: {
  readonly tenantId: string;
  readonly target: KillTarget;
  readonly reason: string;
  readonly actor: string;
}) => Promise<KillAnswer>;

export interface Caller {
  readonly tenantId: string;
  readonly tenantName: string;
  readonly keyId: string;
  readonly scopes: ReadonlySet<string>;
  /** When the key stops working (epoch ms); Infinity for a key that does not expire. */
  readonly expiresAtMs: number;
}

export interface GraphQLContext extends GraphQLDependencies {
  readonly caller: Caller;
}

/** The identity recorded as `decidedBy`, `updatedBy`, `publishedBy` and in audit metadata. */
export function actorOf(caller: Caller): string {
  return `api_key:${caller.keyId}`;
}
