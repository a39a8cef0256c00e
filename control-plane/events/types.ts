// What the control plane streams to subscribers: small references, never whole rows. A
// subscriber loads the row it is allowed to see (by id, inside its own tenant), so an event stays
// far below PostgreSQL's 8000-byte NOTIFY limit and a row is never copied to another tenant.

export const EVENT_TYPES = {
  AUDIT_APPENDED: 'audit.appended',
  APPROVAL_CREATED: 'approval.created',
  APPROVAL_RESOLVED: 'approval.resolved',
} as const;

export interface AuditAppendedEvent {
  readonly type: typeof EVENT_TYPES.AUDIT_APPENDED;
  readonly tenantId: string;
  /** `action` is a pre-filter hint; it may be absent (dropped when the payload was too large). */
  readonly entry: { readonly id: string; readonly action?: string };
}

export interface ApprovalEvent {
  readonly type: typeof EVENT_TYPES.APPROVAL_CREATED | typeof EVENT_TYPES.APPROVAL_RESOLVED;
  readonly tenantId: string;
  readonly approval: { readonly id: string; readonly agentId: string; readonly status: string };
}

export type GatewayEvent = AuditAppendedEvent | ApprovalEvent;

export interface SubscribeOptions {
  /**
   * Events buffered for a subscriber that does not read them (default 1000). A subscriber that
   * falls further behind is ended with EventOverflowError instead of growing memory without bound
   * or silently missing events.
   */
  readonly maxBuffered?: number;
}

export interface EventBus {
  /** Delivers to every matching subscriber of this process and, by its transport, of the others. */
  publish(event: GatewayEvent): void;
  publishMany(events: readonly GatewayEvent[]): void;
  /** Events matching `filter`, in publication order; `return()` unsubscribes at once. */
  subscribe(
    filter: (event: GatewayEvent) => boolean,
    options?: SubscribeOptions,
  ): AsyncIterableIterator<GatewayEvent>;
  /** Subscriptions open in this process. */
  readonly subscriberCount: number;
  /** Ends every subscription and releases the transport. */
  close(): Promise<void>;
}

export class EventOverflowError extends Error {
  constructor(readonly maxBuffered: number) {
    super(`event subscriber fell more than ${maxBuffered} events behind and was ended`);
    this.name = 'EventOverflowError';
  }
}

export const DEFAULT_MAX_BUFFERED = 1000;
