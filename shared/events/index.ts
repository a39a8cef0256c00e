// Gateway events: approvals created and resolved, audit entries appended. One bus interface over
// two transports: in-process (the single-process default, and PGlite, which is single-process by
// design) and PostgreSQL LISTEN/NOTIFY (storage/events: every process sharing the database).
// Tenant isolation is not the bus's job: subscribers filter on the tenant of the caller.
import type { AuditEntry } from '../audit/index.js';
import { asTenantId } from '../ids.js';
import { EVENT_TYPES, type EventBus, type GatewayEvent } from './types.js';

export {
  createEventBus,
  GATEWAY_EVENTS_TOPIC,
  type GatewayEventTarget,
  LocalEventTarget,
} from './event-bus.js';
export { createEventWaiter, type EventWaiter } from './event-waiter.js';
export { followEvents, type GatewayEventOf } from './follow-events.js';
export { mapEvents } from './map-events.js';
export * from './types.js';

/** The audit writer's `onCommitted` hook that publishes `audit.appended` for each entry. */
export function publishAuditEntries(
  bus: Pick<EventBus, 'publishMany'>,
): (entries: readonly AuditEntry[]) => void {
  return (entries) =>
    bus.publishMany(
      entries.map(
        (entry): GatewayEvent => ({
          type: EVENT_TYPES.AUDIT_APPENDED,
          // A committed entry names the tenant it was appended for.
          tenantId: asTenantId(entry.tenantId),
          entry: { id: entry.id, action: entry.action },
        }),
      ),
    );
}
