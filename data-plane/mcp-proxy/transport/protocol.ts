// What the proxy's downstream transport knows of MCP itself: the protocol revisions it speaks
// (every revision the official SDK still negotiates: the proxy relays messages, it does not
// reinterpret them, so an older revision costs nothing), the headers, and the shapes of JSON-RPC
// messages. A new protocol era is a new transport folder beside this one, not a rewrite.

/** Newest first. 2025-11-25 is what the official TypeScript SDK speaks today. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
]);

/** Assumed when a request carries no MCP-Protocol-Version header (the 2025-06-18 transport rule). */
export const DEFAULT_NEGOTIATED_VERSION = '2025-03-26';

export const SESSION_HEADER = 'mcp-session-id';
export const PROTOCOL_VERSION_HEADER = 'mcp-protocol-version';

export type JsonRpcId = string | number;

export interface JsonRpcRequestMessage {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId;
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export interface JsonRpcNotificationMessage {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export interface JsonRpcResponseMessage {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId | null;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

export type JsonRpcMessage =
  | JsonRpcRequestMessage
  | JsonRpcNotificationMessage
  | JsonRpcResponseMessage;

export type MessageKind = 'request' | 'notification' | 'response' | 'invalid';

/** What a parsed value is, by the JSON-RPC 2.0 rules (ids: strings or numbers, never null here). */
export function kindOf(value: unknown): MessageKind {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'invalid';
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== '2.0') return 'invalid';
  const params = message.params;
  if (
    params !== undefined &&
    (typeof params !== 'object' || params === null || Array.isArray(params))
  )
    return 'invalid';
  const hasId = typeof message.id === 'string' || typeof message.id === 'number';
  if (typeof message.method === 'string') {
    if (message.id === undefined) return 'notification';
    return hasId ? 'request' : 'invalid';
  }
  if (!hasId && message.id !== null) return 'invalid';
  if ('result' in message || 'error' in message) return 'response';
  return 'invalid';
}

/** JSON-RPC error codes the proxy answers with. */
export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  INTERNAL_ERROR: -32603,
  /** A call the gateway denied (the message names the reasonCode; data carries it). */
  GATEWAY_DENIED: -32001,
  /** A call the gateway allowed but could not complete upstream (same as inspect). */
  UPSTREAM_FAILED: -32002,
} as const;
