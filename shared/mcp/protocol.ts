// What the gateway knows of the MCP protocol itself, in one place: the revisions it speaks, the
// revision each side offers, the Streamable HTTP header names, the JSON-RPC error codes it answers
// with and the methods it acts on. What each revision changes for the gateway, and how to add
// one, is docs/mcp-protocol.md. Pure: constants and one lookup.
//
// Which revision is offered where:
// - The MCP proxy offers none of its own: it sends the downstream client's `initialize` upstream
//   unchanged (data-plane/mcp-proxy/upstream/sessions.ts), so the upstream negotiates with what
//   the client speaks. Downstream it accepts an MCP-Protocol-Version header naming any
//   MCP_PROTOCOL_VERSIONS entry (else 400 MCP_PROTOCOL_VERSION_UNSUPPORTED); a request without
//   the header is taken to speak the session's negotiated revision (the proxy always knows it,
//   so the spec's fallback of 2025-03-26 for a server that cannot tell never applies).
// - The inspect forwarder (data-plane/upstream/client.ts) speaks for the agent and offers
//   INSPECT_OFFERED_PROTOCOL_VERSION, 2025-06-18, not the newest: from 2025-11-25 on a server
//   may end a request's SSE stream before the response and expect the client to resume it with
//   GET + Last-Event-ID (SSE polling; the SDK's `closeSSEStream`), and the forwarder does not
//   resume. Offering 2025-06-18, such a server answers on the open stream instead
//   (tests/data-plane/upstream/offered-revision.test.ts shows both). It may offer the newest
//   once it resumes streams as the proxy's upstream sessions do.

/** Every revision the gateway speaks, newest first; at least every one the official TypeScript
 *  SDK negotiates (its clients send them as MCP-Protocol-Version). */
export const MCP_PROTOCOL_VERSIONS = Object.freeze([
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
] as const);

export type McpProtocolVersion = (typeof MCP_PROTOCOL_VERSIONS)[number];

export const LATEST_PROTOCOL_VERSION: McpProtocolVersion = MCP_PROTOCOL_VERSIONS[0];

/** Offered in the inspect forwarder's `initialize` (see the opening comment for why). */
export const INSPECT_OFFERED_PROTOCOL_VERSION: McpProtocolVersion = '2025-06-18';

const SUPPORTED = new Set<string>(MCP_PROTOCOL_VERSIONS);

/** True when `version` names a revision the gateway speaks (an MCP-Protocol-Version header). */
export function isSupportedProtocolVersion(version: string): version is McpProtocolVersion {
  return SUPPORTED.has(version);
}

/** Streamable HTTP header names, lower case as node presents them (HTTP names are
 *  case-insensitive; the spec writes Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID). */
export const MCP_HEADERS = Object.freeze({
  SESSION_ID: 'mcp-session-id',
  PROTOCOL_VERSION: 'mcp-protocol-version',
  /** Resuming an SSE stream (GET) after the last event received. */
  LAST_EVENT_ID: 'last-event-id',
} as const);

/** The Accept values of Streamable HTTP: a POST takes either answer, a GET only a stream. */
export const MCP_ACCEPT = Object.freeze({
  POST: 'application/json, text/event-stream',
  STREAM: 'text/event-stream',
} as const);

/** JSON-RPC error codes the gateway answers with: JSON-RPC 2.0's own, then the gateway's
 *  (the implementation-defined server error range, -32000 to -32099). */
export const JSONRPC_ERROR_CODES = Object.freeze({
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  INTERNAL_ERROR: -32603,
  /** A call the gateway denied (a policy block, an unknown or killed agent…); `data.reasonCode`
   *  names why. */
  GATEWAY_DENIED: -32001,
  /** A call the gateway allowed but could not complete upstream. */
  UPSTREAM_FAILED: -32002,
} as const);

/** The MCP methods the gateway sends or acts on; every other one it relays unread. */
export const MCP_METHODS = Object.freeze({
  INITIALIZE: 'initialize',
  INITIALIZED: 'notifications/initialized',
  TOOLS_LIST: 'tools/list',
  TOOLS_CALL: 'tools/call',
  /** Sent on a held call's stream when the client asked for progress (a progressToken)… */
  PROGRESS: 'notifications/progress',
  /** …else a log message. */
  MESSAGE: 'notifications/message',
} as const);
