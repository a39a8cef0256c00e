// The JSON-RPC 2.0 shapes the forwarding client accepts from an upstream, and the one check that
// decides whether a parsed body is the response to a given request. The check is structural and
// cheap: the gateway passes the response through untouched, so it must only be sure that it is a
// JSON-RPC response and that it answers the request that was sent.

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: unknown;
}

/** A notification: a method without an id (no response is expected). */
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
}

export interface JsonRpcSuccessResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: unknown;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  /** null when the upstream could not tell which request failed (JSON-RPC 2.0 §5). */
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccessResponse | JsonRpcErrorResponse;

/** Any one JSON-RPC message (batches are not part of MCP since 2025-06-18). */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** How a parsed JSON value relates to the request with id `expectedId`. */
export const MESSAGE_KIND = {
  /** The response to the request (a result, or an error with the same id or id null). */
  RESPONSE: 0,
  /** A server-initiated request or notification (has `method`): relayed only to an exchange's
   *  `onMessage`. */
  SERVER_MESSAGE: 1,
  /** A response to a different request. */
  FOREIGN_RESPONSE: 2,
  /** Not a JSON-RPC 2.0 message. */
  INVALID: 3,
} as const;

export type MessageKind = (typeof MESSAGE_KIND)[keyof typeof MESSAGE_KIND];

export function classifyMessage(value: unknown, expectedId: JsonRpcId): MessageKind {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return MESSAGE_KIND.INVALID;
  }
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== '2.0') return MESSAGE_KIND.INVALID;
  if (typeof message.method === 'string') return MESSAGE_KIND.SERVER_MESSAGE;
  const id = message.id;
  if ('result' in message) {
    if ('error' in message) return MESSAGE_KIND.INVALID;
    if (typeof id !== 'string' && typeof id !== 'number') return MESSAGE_KIND.INVALID;
    return id === expectedId ? MESSAGE_KIND.RESPONSE : MESSAGE_KIND.FOREIGN_RESPONSE;
  }
  const error = message.error as Record<string, unknown> | null | undefined;
  if (
    typeof error !== 'object' ||
    error === null ||
    typeof error.code !== 'number' ||
    typeof error.message !== 'string'
  ) {
    return MESSAGE_KIND.INVALID;
  }
  if (id === null || id === expectedId) return MESSAGE_KIND.RESPONSE;
  return typeof id === 'string' || typeof id === 'number'
    ? MESSAGE_KIND.FOREIGN_RESPONSE
    : MESSAGE_KIND.INVALID;
}

export function isErrorResponse(response: JsonRpcResponse): response is JsonRpcErrorResponse {
  return 'error' in response;
}
