// The configuration stream's wire protocol (docs/config-push.md), shared by the control plane that
// serves it and the data planes that consume it, so the two sides cannot drift apart.

/** Server-Sent Events: full snapshots and heartbeats. */
export const CONFIG_STREAM_PATH = '/api/v1/control-plane/config-stream';
/** POST { version }: the snapshot version a data plane applied. */
export const DATA_PLANE_ACK_PATH = '/api/v1/control-plane/data-planes/ack';

/** The SSE event carrying a whole snapshot as JSON, with id `<epoch>:<version>`. */
export const SNAPSHOT_EVENT = 'snapshot';
export const HEARTBEAT_EVENT = 'heartbeat';
/** Default heartbeat period; the client treats three missed heartbeats as a lost stream. */
export const HEARTBEAT_INTERVAL_MS = 15_000;
