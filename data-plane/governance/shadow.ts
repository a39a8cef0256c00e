// Shadow mode: everything is evaluated, nothing is enforced. A block or a hold becomes an audited
// counterfactual (`inspect.shadow_block`) reported in `shadow`, and the call is forwarded as in
// production (a SIMULATE decision is reported, the call still forwarded).
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { type ErrorCode, formatErrorMessage } from '../../shared/errors/index.js';
import { answerAllow, PLAIN_ALLOW } from './allow.js';
import { addPolicyFields, type ShadowView } from './answers.js';
import { appendDenyAudit } from './deny.js';
import type { InspectDependencies } from './dependencies.js';
import type { AgentExchange, Block } from './exchange.js';
import type { PipelineOutcome } from './pipeline.js';

export async function answerShadow(
  deps: InspectDependencies,
  exchange: AgentExchange,
  outcome: PipelineOutcome,
): Promise<void> {
  const { tenant, call, inspectionId } = exchange;
  if (outcome.kind === 'allow') {
    const view: ShadowView = { decision: 'allow', reasonCode: null };
    if (outcome.decision) addPolicyFields(view, outcome.decision);
    return answerAllow(deps, exchange, PLAIN_ALLOW, null, view);
  }
  const code: ErrorCode = outcome.kind === 'deny' ? outcome.code : 'NPL_REQUIRE_HUMAN';
  const block: Block =
    outcome.kind === 'deny'
      ? outcome
      : {
          code,
          message: formatErrorMessage('NPL_REQUIRE_HUMAN', { reason: outcome.decision.reason }),
          decision: outcome.decision,
        };
  const auditId = await appendDenyAudit(
    deps,
    tenant,
    call,
    inspectionId,
    call.mode,
    block,
    AUDIT_ACTIONS.INSPECT_SHADOW_BLOCK,
  );
  const view: ShadowView = {
    decision: outcome.kind === 'deny' ? 'deny' : 'require_human_approval',
    reasonCode: code,
    auditId,
  };
  if (block.signal) view.signal = block.signal;
  if (block.decision) addPolicyFields(view, block.decision);
  return answerAllow(deps, exchange, PLAIN_ALLOW, null, view);
}
