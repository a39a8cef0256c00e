// JSON-RPC error messages the proxy sends for what it decides itself. A gateway decision reaches
// an MCP client as a JSON-RPC error on HTTP 200 (an HTTP 4xx is a transport failure to MCP
// clients): the message starts with the reasonCode, `data` carries it with the ids an operator
// looks up (inspectionId, auditId, approvalId).
import { formatErrorMessage, GatewayError } from '../../shared/errors/index.js';
import { JSONRPC_ERROR_CODES } from '../../shared/mcp/protocol.js';
import type { InspectAnswer } from '../governance/answers.js';
import { UpstreamError } from '../upstream/index.js';
import type { JsonRpcId, JsonRpcResponseMessage } from './transport/messages.js';

export function rpcError(
  id: JsonRpcId | null,
  code: number,
  reasonCode: string,
  message: string,
  data: Record<string, unknown> = {},
): JsonRpcResponseMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: { code, message: `${reasonCode}: ${message}`, data: { reasonCode, ...data } },
  };
}

/**
 * UnsupportedProtocolVersion (-32022): the request's revision is not served, `supported` is; why
 * in `detail`. Answered with HTTP 400.
 */
export function unsupportedVersion(
  id: JsonRpcId | null,
  requested: string,
  supported: readonly string[],
  detail: string,
): JsonRpcResponseMessage {
  return rpcError(
    id,
    JSONRPC_ERROR_CODES.UNSUPPORTED_PROTOCOL_VERSION,
    'MCP_PROTOCOL_VERSION_UNSUPPORTED',
    `${formatErrorMessage('MCP_PROTOCOL_VERSION_UNSUPPORTED', { version: requested })}: ${detail}`,
    { supported, requested },
  );
}

/** The message an answer of the governance pipeline becomes on the client's stream. */
export function responseOf(id: JsonRpcId, answer: InspectAnswer): JsonRpcResponseMessage {
  const response = answer.response as JsonRpcResponseMessage | undefined;
  // The upstream's own answer, a result or a JSON-RPC error of its own, passes unchanged.
  if (answer.reasonCode === null && response && isUpstreamAnswer(response)) return response;
  const reasonCode = answer.reasonCode ?? 'INTERNAL_ERROR';
  const data: Record<string, unknown> = { inspectionId: answer.inspectionId };
  if (answer.auditId) data.auditId = answer.auditId;
  if (answer.ruleId) data.ruleId = answer.ruleId;
  if (answer.policy) data.policy = answer.policy;
  if (answer.approval) data.approvalId = answer.approval.id;
  if (answer.limit) data.limit = answer.limit;
  if (answer.executionMode) data.executionMode = answer.executionMode;
  const code =
    answer.decision === 'allow'
      ? JSONRPC_ERROR_CODES.UPSTREAM_FAILED
      : (response?.error?.code ?? JSONRPC_ERROR_CODES.GATEWAY_DENIED);
  return rpcError(id, code, reasonCode, answer.message ?? reasonCode, data);
}

/** True when the forwarded call's response is the upstream's answer to it. */
export function isUpstreamAnswer(response: JsonRpcResponseMessage): boolean {
  return 'result' in response || (typeof response.error === 'object' && response.error !== null);
}

/**
 * What a failed upstream exchange (or the forwarding token it needed) becomes: its code and a
 * detail safe to return. Anything that is not a gateway error is rethrown by the caller.
 */
export function upstreamFailureOf(error: unknown): { code: string; detail: string } | undefined {
  if (error instanceof UpstreamError) return { code: error.code, detail: error.detail };
  if (error instanceof GatewayError) return { code: error.code, detail: error.message };
  return undefined;
}
