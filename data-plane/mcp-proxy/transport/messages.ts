// The shapes of the JSON-RPC 2.0 messages the proxy's downstream transport reads and writes, and
// how a parsed value is told apart. The protocol's own facts (revisions, headers, error codes,
// methods) are in shared/mcp/protocol.ts.

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
