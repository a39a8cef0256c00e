// Waiting for a held call's decision on the approvals long-poll
// (GET /api/v1/mcp/gateway/approvals/{id}?wait=…): one request at a time, each waiting at most
// 30 s on the gateway, until the approval is decided, expires, the client's own bound passes
// (ApprovalTimeout) or the caller aborts (the signal's reason, an AbortError).
import type { ResolvedConfig } from './config.js';
import {
  ApprovalExpired,
  ApprovalRejected,
  ApprovalTimeout,
  GatewayRequestError,
} from './errors.js';
import type { HttpSend } from './http.js';

/** The gateway's longest long-poll (docs/inspect.md). */
const MAX_WAIT_SECONDS = 30;

export interface WaitForApprovalOptions {
  readonly signal?: AbortSignal | undefined;
  /** Default: the client's approvalTimeoutMs. */
  readonly timeoutMs?: number | undefined;
}

export async function waitForApproval(
  config: ResolvedConfig,
  send: HttpSend,
  approvalId: string,
  options: WaitForApprovalOptions = {},
): Promise<'approved'> {
  const timeoutMs = options.timeoutMs ?? config.approvalTimeoutMs;
  const deadline = Date.now() + timeoutMs;
  const { signal } = options;
  for (;;) {
    signal?.throwIfAborted();
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new ApprovalTimeout(approvalId, timeoutMs);
    const waitSeconds = Math.min(MAX_WAIT_SECONDS, remaining / 1000);
    const answer = await send({
      method: 'GET',
      path: `/api/v1/mcp/gateway/approvals/${encodeURIComponent(approvalId)}?wait=${waitSeconds.toFixed(3)}`,
      signal,
      extraTimeoutMs: waitSeconds * 1000,
    });
    const { body } = answer;
    if (answer.status !== 200) {
      throw GatewayRequestError.fromBody(answer.status, body);
    }
    switch (body.status) {
      case 'approved':
        return 'approved';
      case 'rejected':
        throw new ApprovalRejected(
          approvalId,
          typeof body.decisionReason === 'string' ? body.decisionReason : null,
        );
      case 'expired':
        throw new ApprovalExpired(approvalId);
      case 'pending':
        continue;
      default:
        // 'used': this approval already let its call through once.
        throw new GatewayRequestError(
          200,
          'APPROVAL_ALREADY_USED',
          `approval ${approvalId} is ${String(body.status)}`,
        );
    }
  }
}
