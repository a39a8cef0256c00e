// What the gateway streams to subscribers: small references, never whole rows. A
// subscriber loads the row it is allowed to see (by id, inside its own tenant), so an event stays
// far below PostgreSQL's 8000-byte NOTIFY limit and a row is never copied to another tenant.
import type { AgentId, ApprovalId, TenantId } from '../ids.js';

export const EVENT_TYPES = {
  AUDIT_APPENDED: 'audit.appended',
  APPROVAL_CREATED: 'approval.created',
  APPROVAL_RESOLVED: 'approval.resolved',
} as const;

export interface AuditAppendedEvent {
  readonly type: typeof EVENT_TYPES.AUDIT_APPENDED;
  readonly tenantId: TenantId;
  /** `action` is a pre-filter hint; it may be absent (dropped when the payload was too large). */
  readonly entry: { readonly id: string; readonly action?: string };
}

export interface ApprovalEvent {
  readonly type: typeof EVENT_TYPES.APPROVAL_CREATED | typeof EVENT_TYPES.APPROVAL_RESOLVED;
  readonly tenantId: TenantId;
  readonly approval: {
    readonly id: ApprovalId;
    readonly agentId: AgentId;
    readonly status: string;
  };
}

export type GatewayEvent = AuditAppendedEvent | ApprovalEvent;

export interface EventBus {
  /** Delivers to every matching subscriber of this process and, by its transport, of the others. */
  publish(event: GatewayEvent): void;
  publishMany(events: readonly GatewayEvent[]): void;
  /** Events matching `filter`, in publication order; `return()` unsubscribes at once. */
  subscribe(filter: (event: GatewayEvent) => boolean): AsyncIterableIterator<GatewayEvent>;
  /** Subscriptions open in this process. */
  readonly subscriberCount: number;
  /** Ends every subscription and releases the transport. */
  close(): Promise<void>;
}
