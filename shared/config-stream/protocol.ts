// The configuration stream's wire protocol (docs/config-push.md), shared by the control plane that
// serves it and the data planes that consume it, so the two sides cannot drift apart.
import type { DecisionCountRow } from '../decisions/decision-counts.js';
import type { StatusListConfig } from '../snapshot/index.js';

/**
 * Server-Sent Events: full snapshots, kill deltas and heartbeats. Query: `since`/`epoch` (the
 * snapshot held), `name`, and `kills=<seq>` (the kill cursor): on connect the stream sends every
 * kill after the cursor, then the snapshot when the client is behind, then a heartbeat that means
 * "caught up" (docs/config-push.md, Deltas: kills).
 */
export const CONFIG_STREAM_PATH = '/api/v1/control-plane/config-stream';
/**
 * POST `{ version }` (a snapshot applied), a KillAcknowledgement `{ kill, aborted }`, or a
 * DecisionReport `{ decisions, report_id }` (the decisions counted since the last report).
 */
export const DATA_PLANE_ACK_PATH = '/api/v1/control-plane/data-planes/ack';

/**
 * Response header of the stream: the control plane's public URL (AGENT_GATEWAY_PUBLIC_URL, without
 * a trailing slash). A data plane configured with another one stops before applying anything from
 * the stream: it would mint tokens no other process accepts and refuse the public resource.
 */
export const PUBLIC_URL_HEADER = 'agent-gateway-public-url';

/** The SSE event carrying a whole snapshot as JSON, with id `<epoch>:<version>`. */
export const SNAPSHOT_EVENT = 'snapshot';
/**
 * `{ version, epoch }`: the control plane's current version and epoch. The first one after a
 * connect means "caught up"; a data plane holding a snapshot of the same epoch then holds the
 * current configuration (another epoch: the control plane is building a version above it).
 */
export const HEARTBEAT_EVENT = 'heartbeat';
/**
 * A kill delta (`AgentKillDelta`), id `kill:<seq>`: sent to every connected data plane when a kill
 * commits, and on connect for every kill after the client's `kills` cursor. A data plane applies it
 * before anything later on the stream and acknowledges it on the ack endpoint with `{ kill: seq }`.
 */
export const KILL_EVENT = 'kill';
/** Default heartbeat period; the client treats three missed heartbeats as a lost stream. */
export const HEARTBEAT_INTERVAL_MS = 15_000;

/**
 * What a data plane needs to refuse a killed agent at once, without a rebuilt snapshot: the agent
 * and the tenant's status lists re-signed with its credentials' bits set (absent while the control
 * plane could not sign them; the next snapshot carries them).
 */
export interface AgentKillDelta {
  /** AgentKill.seq: the stream's delta sequence, monotonic in commit order. */
  readonly seq: number;
  readonly killId: string;
  readonly tenantId: string;
  readonly agentId: string;
  readonly publicKey: string;
  readonly killedAt: string;
  readonly statusLists: readonly StatusListConfig[];
}

/** The body a data plane posts to the ack endpoint for a kill delta. */
export interface KillAcknowledgement {
  readonly kill: number;
  /** In-flight executions of the agent this data plane aborted when it applied the delta. */
  readonly aborted: number;
}

/**
 * The body a data plane posts to the ack endpoint after each heartbeat it receives: its decision
 * tally, drained (at most MAX_DECISION_REPORT_ROWS rows; the rest goes with the next one). The
 * control plane adds the rows to decision_counts under the reporting data plane's id, once per
 * `report_id`: a report whose answer was lost is sent again unchanged, and adds nothing the
 * second time. Without an id (data planes before it) every delivery adds.
 */
export interface DecisionReport {
  readonly decisions: readonly DecisionCountRow[];
  readonly report_id?: string;
}

/** A report id: what a data plane may name its report with (a UUID fits). */
export const DECISION_REPORT_ID_PATTERN = '^[A-Za-z0-9_-]{16,64}$';
