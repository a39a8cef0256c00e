// What a model reads when Agent Gateway refuses a call — a deny, or a held call whose approval was
// rejected, expired or not decided in time: one sentence every adapter uses, so the reason code
// (the gateway's stable code, see docs/errors.md) and the rule reach the model the same way in
// every framework, and the model can choose another course. The same identifiers, as data, for
// the fields a framework carries beside the text.
import { ApprovalExpired, ApprovalRejected, ApprovalTimeout, GatewayDenied } from '../errors.js';

/** The gateway's "no" to one call: the tool did not run, the agent may go on. */
export type Refusal = GatewayDenied | ApprovalRejected | ApprovalExpired | ApprovalTimeout;

export function isRefusal(error: unknown): error is Refusal {
  return (
    error instanceof GatewayDenied ||
    error instanceof ApprovalRejected ||
    error instanceof ApprovalExpired ||
    error instanceof ApprovalTimeout
  );
}

/** "Agent Gateway denied the call to wire_transfer (NPL_POLICY_BLOCK, rule block_large): …" */
export function describeDenial(toolName: string, denied: GatewayDenied): string {
  const rule = denied.ruleId === undefined ? '' : `, rule ${denied.ruleId}`;
  const why = denied.message.includes(denied.reasonCode) ? '' : `: ${denied.message}`;
  return `Agent Gateway denied the call to ${toolName} (${denied.reasonCode}${rule})${why}. The tool did not run.`;
}

export function describeRefusal(toolName: string, refusal: Refusal): string {
  if (refusal instanceof GatewayDenied) return describeDenial(toolName, refusal);
  return `Agent Gateway held the call to ${toolName} for a human approval that it did not get (${refusal.code}): ${refusal.message}. The tool did not run.`;
}

/** The refusal's identifiers (reasonCode: the gateway's code, or the approval error's). */
export function refusalDetails(refusal: Refusal): Record<string, string | null> {
  if (refusal instanceof GatewayDenied) {
    return {
      reasonCode: refusal.reasonCode,
      ruleId: refusal.ruleId ?? null,
      policy: refusal.policy ?? null,
      auditId: refusal.auditId ?? null,
      inspectionId: refusal.inspectionId,
    };
  }
  return { reasonCode: refusal.code, approvalId: refusal.approvalId };
}
