// Revocations on the fast path (issue 23, item 6): a token or credential revoked anywhere is
// refused by every data plane within milliseconds, as a kill is, instead of with the next snapshot
// (which needs the control plane to notice, rebuild and push: ~0.4 s measured, longer on a large
// configuration). The revoking process publishes `revocation.committed` after its commit
// (data-plane/oauth/revocations.ts, the control plane's revocation services); every data plane
// hears it on the event bus (PostgreSQL LISTEN/NOTIFY, so it needs no control plane) and:
// - a token: adds its jti to the RevokedTokens set introspection and the proxy consult;
// - a credential: reads its re-signed status list and the tokens revoked with it (the event is a
//   reference, never rows) and overlays the list on the store (kill-overlay.ts), so identity
//   verification sees the bit set, and refuses the tokens.
// Both only ever make the data plane stricter, so a forged or replayed event can refuse at most
// what it names until the token expires. The snapshot that follows carries the same facts; a
// missed event (the LISTEN connection lost) costs only the speed, not the revocation.
import type { Logger } from 'pino';
import {
  EVENT_TYPES,
  type EventBus,
  followEvents,
  type RevocationReference,
} from '../../shared/events/index.js';
import type { StatusListConfig } from '../../shared/snapshot/index.js';
import type { RevokedTokens } from '../oauth/revocations.js';
import type { SnapshotStore } from '../store/snapshot-store.js';

export interface RevocationFollowerOptions {
  readonly events: Pick<EventBus, 'subscribe'>;
  readonly revoked: Pick<RevokedTokens, 'add'>;
  readonly store: Pick<SnapshotStore, 'applyStatusLists'>;
  /** storage/tables/revocations.ts readCredentialRevocation over the data plane's database. */
  readonly readCredential: (
    tenantId: string,
    credentialId: string,
  ) => Promise<
    | {
        readonly statusList: StatusListConfig | undefined;
        readonly tokens: readonly { readonly jti: string; readonly expiresAtMs: number }[];
      }
    | undefined
  >;
  readonly logger: Logger;
  /** Called after each revocation applied (tests and metrics): the kind and when it was heard. */
  readonly onApplied?: (kind: RevocationReference['kind']) => void;
}

/** Follows revocations until the returned function is called (and awaited). */
export function followRevocations(options: RevocationFollowerOptions): () => Promise<void> {
  const { events, revoked, store, logger } = options;
  const apply = async (tenantId: string, revocation: RevocationReference): Promise<void> => {
    if (revocation.kind === 'access_token') {
      if (typeof revocation.jti !== 'string' || !Number.isFinite(revocation.expiresAt)) return;
      revoked.add(revocation.jti, revocation.expiresAt * 1000);
    } else if (revocation.kind === 'identity_credential') {
      if (typeof revocation.credentialId !== 'string') return;
      const found = await options.readCredential(tenantId, revocation.credentialId);
      if (!found) return;
      if (found.statusList) store.applyStatusLists(tenantId, [found.statusList]);
      for (const token of found.tokens) revoked.add(token.jti, token.expiresAtMs);
    } else {
      return;
    }
    options.onApplied?.(revocation.kind);
  };
  return followEvents(
    events,
    EVENT_TYPES.REVOCATION_COMMITTED,
    // Not awaited: a credential's database read must not delay the tokens heard after it (the
    // overlay and the set only grow, so the order of application does not matter).
    (event) => {
      void apply(event.tenantId, event.revocation).catch((error: unknown) => {
        logger.warn(
          { err: error, tenantId: event.tenantId, kind: event.revocation?.kind },
          'revocation heard but not applied; the next snapshot carries it',
        );
      });
    },
    (error) => logger.error({ err: error }, 'revocation watch failed'),
  );
}
