// What a model reads when Agent Gateway denies a call: one sentence every adapter uses, so the
// reasonCode (the gateway's stable code, see docs/errors.md) and the rule reach the model the
// same way in every framework, and the model can choose another course.
import type { GatewayDenied } from '../errors.js';

/** "Agent Gateway denied the call to wire_transfer (NPL_POLICY_BLOCK, rule block_large): …" */
export function describeDenial(toolName: string, denied: GatewayDenied): string {
  const rule = denied.ruleId === undefined ? '' : `, rule ${denied.ruleId}`;
  const why = denied.message.includes(denied.reasonCode) ? '' : `: ${denied.message}`;
  return `Agent Gateway denied the call to ${toolName} (${denied.reasonCode}${rule})${why}. The tool did not run.`;
}
