// The control plane's event bus: approvals created and resolved, audit entries appended. One
// interface, two transports: in-process (the single-process default, and PGlite, which is
// single-process by design) and PostgreSQL LISTEN/NOTIFY (every process sharing the database).
// Tenant isolation is not the bus's job: subscribers filter on the tenant of the caller.
import type { AuditEntry } from '../../shared/audit/index.js';
import { LocalEventBus } from './local-bus.js';
import { createPostgresEventBus } from './postgres-bus.js';
import { EVENT_TYPES, type EventBus, type GatewayEvent } from './types.js';

export { LocalEventBus } from './local-bus.js';
export { createPostgresEventBus, eventChannel, packNotifications } from './postgres-bus.js';
export * from './types.js';

export interface CreateEventBusOptions {
  /** PostgreSQL connection string: LISTEN/NOTIFY; absent: in-process only. */
  readonly url?: string | undefined;
  readonly schema?: string | undefined;
  readonly onError?: (error: unknown, during: 'notify' | 'listen') => void;
}

export async function createEventBus(options: CreateEventBusOptions = {}): Promise<EventBus> {
  if (!options.url) return new LocalEventBus();
  return createPostgresEventBus({
    url: options.url,
    ...(options.schema ? { schema: options.schema } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  });
}

/** The audit writer's `onCommitted` hook that publishes `audit.appended` for each entry. */
export function publishAuditEntries(
  bus: Pick<EventBus, 'publishMany'>,
): (entries: readonly AuditEntry[]) => void {
  return (entries) =>
    bus.publishMany(
      entries.map(
        (entry): GatewayEvent => ({
          type: EVENT_TYPES.AUDIT_APPENDED,
          tenantId: entry.tenantId,
          entry: { id: entry.id, action: entry.action },
        }),
      ),
    );
}

/** Maps and filters a subscription; `return()` ends the source at once, even mid-`next()`. */
export function mapEvents<T>(
  source: AsyncIterableIterator<GatewayEvent>,
  map: (event: GatewayEvent) => Promise<T | undefined> | T | undefined,
): AsyncIterableIterator<T> {
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      for (;;) {
        const result = await source.next();
        if (result.done) return { value: undefined, done: true };
        const value = await map(result.value);
        if (value !== undefined) return { value, done: false };
      }
    },
    async return() {
      await source.return?.();
      return { value: undefined, done: true };
    },
    async throw(error: unknown) {
      await source.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
