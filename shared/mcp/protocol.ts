// What the gateway knows of the MCP protocol itself, in one place: the revisions it speaks, the
// revision each side offers, the Streamable HTTP header names, the JSON-RPC error codes it answers
// with and the methods it acts on. What each revision changes for the gateway, and how to add
// one, is docs/mcp-protocol.md. Pure: constants and two lookups.
//
// Which revision is offered where:
// - The MCP proxy offers none of its own. Session era: it sends the downstream client's
//   `initialize` upstream unchanged (data-plane/mcp-proxy/upstream/sessions.ts), so the upstream
//   negotiates with what the client speaks; on a session it accepts an MCP-Protocol-Version
//   header naming any SESSION_PROTOCOL_VERSIONS entry (else 400
//   MCP_PROTOCOL_VERSION_UNSUPPORTED); a request without the header is taken to speak the
//   session's negotiated revision (the proxy always knows it, so the spec's fallback of
//   2025-03-26 for a server that cannot tell never applies). Stateless era: each request names
//   its revision (header and `_meta`, shared/mcp/stateless-request.ts) and goes upstream as the
//   client sent it.
// - The inspect forwarder (data-plane/upstream/client.ts) speaks for the agent and offers
//   INSPECT_OFFERED_PROTOCOL_VERSION, 2025-06-18, not the newest: from 2025-11-25 on a server
//   may end a request's SSE stream before the response and expect the client to resume it with
//   GET + Last-Event-ID (SSE polling; the SDK's `closeSSEStream`), and the forwarder does not
//   resume. Offering 2025-06-18, such a server answers on the open stream instead
//   (tests/data-plane/upstream/offered-revision.test.ts shows both). It may offer the newest
//   once it resumes streams as the proxy's upstream sessions do.

/** The revisions of the session era, newest first: an `initialize` handshake opens a session
 *  (`Mcp-Session-Id`) whose negotiated revision every later request speaks. At least every one
 *  the official TypeScript SDK 1.x negotiates. */
export const SESSION_PROTOCOL_VERSIONS = Object.freeze([
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
] as const);

/** The revisions of the stateless era, newest first: no `initialize` and no session; every
 *  request carries its revision, client info and capabilities in `params._meta` (MCP_META_KEYS)
 *  and mirrors its method and name into headers. */
export const STATELESS_PROTOCOL_VERSIONS = Object.freeze(['2026-07-28'] as const);

/** Every revision the gateway speaks, newest first (both eras). */
export const MCP_PROTOCOL_VERSIONS = Object.freeze([
  ...STATELESS_PROTOCOL_VERSIONS,
  ...SESSION_PROTOCOL_VERSIONS,
] as const);

export type McpProtocolVersion = (typeof MCP_PROTOCOL_VERSIONS)[number];
export type SessionProtocolVersion = (typeof SESSION_PROTOCOL_VERSIONS)[number];
export type StatelessProtocolVersion = (typeof STATELESS_PROTOCOL_VERSIONS)[number];

/** How a revision carries its state: a session opened by initialize, or every request alone. */
export type McpEra = 'session' | 'stateless';

export const LATEST_PROTOCOL_VERSION: McpProtocolVersion = MCP_PROTOCOL_VERSIONS[0];
/** The newest revision with sessions (what an SDK 1.x client or server negotiates at best). */
export const LATEST_SESSION_PROTOCOL_VERSION: SessionProtocolVersion = SESSION_PROTOCOL_VERSIONS[0];

/** Offered in the inspect forwarder's `initialize` (see the opening comment for why). */
export const INSPECT_OFFERED_PROTOCOL_VERSION: SessionProtocolVersion = '2025-06-18';

const SUPPORTED = new Set<string>(MCP_PROTOCOL_VERSIONS);
const SESSION_ERA = new Set<string>(SESSION_PROTOCOL_VERSIONS);
const STATELESS_ERA = new Set<string>(STATELESS_PROTOCOL_VERSIONS);

/** True when `version` names a revision the gateway speaks, of either era. */
export function isSupportedProtocolVersion(version: string): version is McpProtocolVersion {
  return SUPPORTED.has(version);
}

/** The era of a revision the gateway speaks; undefined for any other string. */
export function eraOf(version: string): McpEra | undefined {
  if (SESSION_ERA.has(version)) return 'session';
  if (STATELESS_ERA.has(version)) return 'stateless';
  return undefined;
}

/** Streamable HTTP header names, lower case as node presents them (HTTP names are
 *  case-insensitive; the spec writes Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID). */
export const MCP_HEADERS = Object.freeze({
  SESSION_ID: 'mcp-session-id',
  PROTOCOL_VERSION: 'mcp-protocol-version',
  /** Resuming an SSE stream (GET) after the last event received. */
  LAST_EVENT_ID: 'last-event-id',
  /** Stateless era: the body's `method`, mirrored for intermediaries. */
  METHOD: 'mcp-method',
  /** Stateless era: `params.name` (tools/call, prompts/get) or `params.uri` (resources/read). */
  NAME: 'mcp-name',
} as const);

/** Stateless era: a tool parameter annotated `x-mcp-header: X` travels as `Mcp-Param-X` too
 *  (lower case here, as node presents it). The gateway forwards these unread. */
export const MCP_PARAM_HEADER_PREFIX = 'mcp-param-';

/** The `_meta` keys of the stateless era (the `io.modelcontextprotocol/` prefix is MCP's own). */
export const MCP_META_KEYS = Object.freeze({
  PROTOCOL_VERSION: 'io.modelcontextprotocol/protocolVersion',
  CLIENT_INFO: 'io.modelcontextprotocol/clientInfo',
  CLIENT_CAPABILITIES: 'io.modelcontextprotocol/clientCapabilities',
  /** A result's `_meta`: who answered. */
  SERVER_INFO: 'io.modelcontextprotocol/serverInfo',
  /** A notification of a `subscriptions/listen` stream: which subscription it belongs to. */
  SUBSCRIPTION_ID: 'io.modelcontextprotocol/subscriptionId',
  LOG_LEVEL: 'io.modelcontextprotocol/logLevel',
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
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Stateless era, HTTP 400: a required header is missing or does not match the body. */
  HEADER_MISMATCH: -32020,
  /** Stateless era, HTTP 400: answering needs a capability the client did not declare. */
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  /** Stateless era, HTTP 400: `data.supported` lists the revisions served, `data.requested`. */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
  /** A call the gateway denied (a policy block, an unknown or killed agent…); `data.reasonCode`
   *  names why. */
  GATEWAY_DENIED: -32001,
  /** A call the gateway allowed but could not complete upstream. */
  UPSTREAM_FAILED: -32002,
} as const);

/** The JSON-RPC errors only a server of the stateless era answers with: an upstream that refuses
 *  with one of them speaks that era, one that refuses with anything else speaks sessions. */
export const STATELESS_ERA_ERROR_CODES: ReadonlySet<number> = new Set([
  JSONRPC_ERROR_CODES.HEADER_MISMATCH,
  JSONRPC_ERROR_CODES.MISSING_REQUIRED_CLIENT_CAPABILITY,
  JSONRPC_ERROR_CODES.UNSUPPORTED_PROTOCOL_VERSION,
  JSONRPC_ERROR_CODES.METHOD_NOT_FOUND,
  JSONRPC_ERROR_CODES.INVALID_PARAMS,
]);

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
  RESOURCES_READ: 'resources/read',
  PROMPTS_GET: 'prompts/get',
  /** Stateless era: what a server is (revisions, capabilities, its info in the result's _meta). */
  SERVER_DISCOVER: 'server/discover',
  /** Stateless era: a long-lived stream of the change notifications the client asked for. */
  SUBSCRIPTIONS_LISTEN: 'subscriptions/listen',
  /** The first message of a listen stream. */
  SUBSCRIPTIONS_ACKNOWLEDGED: 'notifications/subscriptions/acknowledged',
  TOOLS_LIST_CHANGED: 'notifications/tools/list_changed',
  /** A client's (or server's) cancellation of a request it sent (`params.requestId`). */
  CANCELLED: 'notifications/cancelled',
  /** A request for input: a form, or (mode url) a page for the user to open. */
  ELICITATION_CREATE: 'elicitation/create',
  /** 2025-11-25: the URL-mode elicitation named by `elicitationId` is complete. */
  ELICITATION_COMPLETE: 'notifications/elicitation/complete',
} as const);

/** The gateway's own `_meta` keys, under a reverse-DNS prefix of its own as MCP asks. */
export const GATEWAY_META_PREFIX = 'dev.agent-gateway/';
export const GATEWAY_META_KEYS = Object.freeze({
  /** server/discover: the upstream's own serverInfo (the result's serverInfo is the gateway's). */
  UPSTREAM_SERVER_INFO: `${GATEWAY_META_PREFIX}upstreamServerInfo`,
  /** server/discover: the names of the tools the calling agent may see. */
  TOOLS: `${GATEWAY_META_PREFIX}tools`,
  /** A held call's InputRequiredResult: why it is held (the hold's code, then APPROVAL_PENDING). */
  REASON_CODE: `${GATEWAY_META_PREFIX}reasonCode`,
  /** A held call's InputRequiredResult: the approval that holds it, and when that expires. */
  APPROVAL_ID: `${GATEWAY_META_PREFIX}approvalId`,
  EXPIRES_AT: `${GATEWAY_META_PREFIX}expiresAt`,
} as const);

/** The id prefix of the requests the gateway itself sends a client (a session-era URL
 *  elicitation to the approval page): the client's answers to them stop at the gateway. */
export const GATEWAY_REQUEST_ID_PREFIX = 'agent-gateway-elicitation-';

/** The key of the gateway's own entry in a held call's `inputRequests` (the approval page). */
export const GATEWAY_APPROVAL_INPUT_KEY = 'agent-gateway-approval';

/** Stateless era: a result that asks the client for input first (multi-round-trip requests). */
export const INPUT_REQUIRED_RESULT_TYPE = 'input_required';

/** Stateless era: what a list result says about caching it (`ttlMs`, `cacheScope`). */
export const MCP_CACHE_SCOPES = Object.freeze({ PUBLIC: 'public', PRIVATE: 'private' } as const);
