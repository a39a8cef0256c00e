// What the gateway streams to subscribers: small references, never whole rows. A
// subscriber loads the row it is allowed to see (by id, inside its own tenant), so an event stays
// far below PostgreSQL's 8000-byte NOTIFY limit and a row is never copied to another tenant.
import type { AgentId, ApprovalId, TenantId } from '../ids.js';

export const EVENT_TYPES = {
  AUDIT_APPENDED: 'audit.appended',
  APPROVAL_CREATED: 'approval.created',
  APPROVAL_RESOLVED: 'approval.resolved',
  /** A client started or stopped waiting for an approval's decision (Approval.clientWaitingUntil). */
  APPROVAL_WAITING: 'approval.waiting',
  /** A kill is committed to the database: the control plane's fan-out picks it up. */
  AGENT_KILL_COMMITTED: 'agent.kill.committed',
  /** The control plane's fan-out reached the data planes (or gave up waiting for some). */
  AGENT_KILL_PROPAGATED: 'agent.kill.propagated',
  /** A data plane applied a kill it read from the database (the path that needs no control plane). */
  AGENT_KILL_CONFIRMED: 'agent.kill.confirmed',
  /** An agent was spawned, or its kill completed: what consoles' agentEvents subscription shows. */
  AGENT_CHANGED: 'agent.changed',
  /** An upstream changed a pinned tool's definition: the tool is held (docs/tool-pinning.md). */
  TOOL_DEFINITION_CHANGED: 'tool_definition.changed',
  /** An operator approved a tool definition. */
  TOOL_DEFINITION_APPROVED: 'tool_definition.approved',
  /** An API key was revoked: every control plane closes the subscriptions it authenticated. */
  API_KEY_REVOKED: 'api_key.revoked',
  /**
   * An access token or an identity credential was revoked (committed): every data plane refuses
   * it at once, before the snapshot that carries it (docs/config-push.md, "Revocations").
   */
  REVOCATION_COMMITTED: 'revocation.committed',
} as const;

export interface AuditAppendedEvent {
  readonly type: typeof EVENT_TYPES.AUDIT_APPENDED;
  readonly tenantId: TenantId;
  /** `action` is a pre-filter hint; it may be absent (dropped when the payload was too large). */
  readonly entry: { readonly id: string; readonly action?: string };
}

export interface ApprovalEvent {
  readonly type:
    | typeof EVENT_TYPES.APPROVAL_CREATED
    | typeof EVENT_TYPES.APPROVAL_RESOLVED
    | typeof EVENT_TYPES.APPROVAL_WAITING;
  readonly tenantId: TenantId;
  readonly approval: {
    readonly id: ApprovalId;
    readonly agentId: AgentId;
    readonly status: string;
  };
}

/** The kill's identity on the bus: `seq` is the configuration stream's delta sequence. */
export interface KillReference {
  readonly id: string;
  readonly seq: number;
  readonly agentId: AgentId;
}

export interface AgentKillCommittedEvent {
  readonly type: typeof EVENT_TYPES.AGENT_KILL_COMMITTED;
  readonly tenantId: TenantId;
  readonly kill: KillReference;
}

/** What the control plane recorded while fanning a kill out (docs/kill-switch.md). */
export interface KillPropagation {
  /** Data planes connected when the delta was sent (the receiving one included). */
  readonly dataPlanes: number;
  /** Those that acknowledged the delta within the wait. */
  readonly confirmed: number;
  /** Slowest acknowledgement in ms; null when none confirmed. */
  readonly slowestMs: number | null;
  /** Names of the data planes that confirmed (`local` for an in-process store). */
  readonly confirmedBy: readonly string[];
  /** In-flight executions the confirming data planes aborted. */
  readonly abortedExecutions: number;
  /**
   * What each confirming data plane aborted for this kill (its total over every path that applied
   * it): merged by data plane, never summed across paths, so a data plane that applied the kill
   * from the table and then acknowledged the stream delta is counted once. Absent in a propagation
   * recorded before it existed.
   */
  readonly abortedBy?: Readonly<Record<string, number>>;
  /** False when the control plane did not answer in time: only the receiver is known. */
  readonly controlPlaneReached: boolean;
}

export interface AgentKillPropagatedEvent {
  readonly type: typeof EVENT_TYPES.AGENT_KILL_PROPAGATED;
  readonly tenantId: TenantId;
  readonly kill: KillReference;
  readonly propagation: KillPropagation;
}

export interface AgentKillConfirmedEvent {
  readonly type: typeof EVENT_TYPES.AGENT_KILL_CONFIRMED;
  readonly tenantId: TenantId;
  readonly kill: KillReference;
  /** The data plane's name and the executions it aborted applying the kill. */
  readonly confirmation: { readonly by: string; readonly aborted: number };
}

export interface AgentChangedEvent {
  readonly type: typeof EVENT_TYPES.AGENT_CHANGED;
  readonly tenantId: TenantId;
  readonly agent: { readonly id: AgentId; readonly change: 'spawned' | 'killed' };
}

export interface ToolDefinitionEvent {
  readonly type:
    | typeof EVENT_TYPES.TOOL_DEFINITION_CHANGED
    | typeof EVENT_TYPES.TOOL_DEFINITION_APPROVED;
  readonly tenantId: TenantId;
  readonly serverId: string;
  readonly toolName: string;
}

export interface ApiKeyRevokedEvent {
  readonly type: typeof EVENT_TYPES.API_KEY_REVOKED;
  readonly tenantId: TenantId;
  readonly apiKey: { readonly id: string };
}

/**
 * What was revoked: a token by its jti (with its expiry, epoch seconds, so a data plane forgets it
 * when it could no longer be presented), or a credential by id (a data plane reads its re-signed
 * status list and the tokens revoked with it from the database: a reference, not the rows).
 */
export type RevocationReference =
  | { readonly kind: 'access_token'; readonly jti: string; readonly expiresAt: number }
  | { readonly kind: 'identity_credential'; readonly credentialId: string };

export interface RevocationCommittedEvent {
  readonly type: typeof EVENT_TYPES.REVOCATION_COMMITTED;
  readonly tenantId: TenantId;
  readonly revocation: RevocationReference;
}

export type GatewayEvent =
  | RevocationCommittedEvent
  | ApiKeyRevokedEvent
  | ToolDefinitionEvent
  | AuditAppendedEvent
  | ApprovalEvent
  | AgentKillCommittedEvent
  | AgentKillPropagatedEvent
  | AgentKillConfirmedEvent
  | AgentChangedEvent;

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
