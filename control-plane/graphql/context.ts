// The per-request GraphQL context: the services' dependencies and the caller, authenticated once
// per request against the in-memory snapshot (the same keys, hashes and expiry the data plane
// checks), so a revoked key stops working here as soon as the snapshot without it is applied.
import { findPresentedKey } from '../../data-plane/plugins/auth.js';
import type { ApprovalNotifier } from '../../data-plane/routes/inspect/approval-notifier.js';
import type { SnapshotStore } from '../../data-plane/store/snapshot-store.js';
import type { AuditWriter } from '../../storage/audit-writer.js';
import type { Database } from '../../storage/database.js';
import type { EventBus } from '../events/index.js';
import type { LocalSnapshotPublisher } from '../snapshot/local-publisher.js';

/** What the resolvers need besides the caller; one object per server, shared by requests. */
export interface GraphQLDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly store: SnapshotStore;
  readonly publisher: Pick<LocalSnapshotPublisher, 'publishNow'>;
  readonly approvals: Pick<ApprovalNotifier, 'notify'>;
  /** Approval and audit events: published by mutations, streamed by subscriptions. */
  readonly events: EventBus;
}

export interface Caller {
  readonly tenantId: string;
  readonly tenantName: string;
  readonly keyId: string;
  readonly scopes: ReadonlySet<string>;
}

export interface GraphQLContext extends GraphQLDependencies {
  readonly caller: Caller;
}

/**
 * The caller of a request; throws AUTH_INVALID_API_KEY (401, answered by the app's error handler
 * before GraphQL runs, like every REST route). The key check is the data plane's own.
 */
export function authenticateCaller(
  header: string | undefined,
  store: SnapshotStore,
  now = Date.now(),
): Caller {
  const key = findPresentedKey(header, store.current, now);
  return {
    tenantId: key.tenant.id,
    tenantName: key.tenant.name,
    keyId: key.id,
    scopes: key.scopes,
  };
}

/** The identity recorded as `decidedBy`, `updatedBy`, `publishedBy` and in audit metadata. */
export function actorOf(caller: Caller): string {
  return `api_key:${caller.keyId}`;
}
