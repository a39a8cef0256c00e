// Shadow mode: everything is evaluated, nothing is enforced. A block or a hold becomes an audited
// counterfactual (`inspect.shadow_block`) reported in `shadow`, and the call is forwarded as in
// production (a SIMULATE decision is reported, the call still forwarded). A call NPL allows is
// counted in the usage limits it matches, since it is forwarded; a limit that would have refused
// or held it writes the counterfactual instead (docs/limits.md, "Modes").
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { type ErrorCode, formatErrorMessage } from '../../shared/errors/index.js';
import type { CompiledLimit } from '../limits/compiled-limits.js';
import { answerAllow, PLAIN_ALLOW } from './allow.js';
import { addPolicyFields, type ShadowView } from './answers.js';
import { appendDenyAudit } from './deny.js';
import type { InspectDependencies } from './dependencies.js';
import type { AgentExchange, Block } from './exchange.js';
import { limitBlock, limitCallOf } from './limit-checks.js';
import type { PipelineOutcome } from './pipeline.js';

export async function answerShadow(
  deps: InspectDependencies,
  exchange: AgentExchange,
  outcome: PipelineOutcome,
  limits: readonly CompiledLimit[] = [],
): Promise<void> {
  if (outcome.kind === 'allow') {
    const refusal = limits.length === 0 ? null : await countShadowCall(deps, exchange, limits);
    if (refusal) return answerCounterfactual(deps, exchange, refusal.block, refusal.held);
    const view: ShadowView = { decision: 'allow', reasonCode: null };
    if (outcome.decision) addPolicyFields(view, outcome.decision);
    return answerAllow(deps, exchange, PLAIN_ALLOW, null, view);
  }
  const block: Block =
    outcome.kind === 'deny'
      ? outcome
      : {
          code: 'NPL_REQUIRE_HUMAN',
          message: formatErrorMessage('NPL_REQUIRE_HUMAN', { reason: outcome.decision.reason }),
          decision: outcome.decision,
        };
  return answerCounterfactual(deps, exchange, block, outcome.kind === 'require_human');
}

/**
 * Counts a shadow call NPL allowed whatever it exceeds (it is forwarded), and answers what the
 * limits would have done in production: null when they would have let it through.
 */
async function countShadowCall(
  deps: InspectDependencies,
  exchange: AgentExchange,
  limits: readonly CompiledLimit[],
): Promise<{ block: Block; held: boolean } | null> {
  const call = limitCallOf(exchange.tenant, exchange.call);
  const check = await deps.usage.reserve(call, limits);
  if (check.ok) return null;
  const held = check.reason === 'exceeded' && check.limit.limit.action === 'REQUIRE_HUMAN';
  if (check.reason === 'exceeded') await deps.usage.reserve(call, limits, { force: true });
  const block = limitBlock(check);
  return {
    block: held ? { ...block, code: 'LIMIT_REQUIRE_HUMAN' } : block,
    held,
  };
}

/** The audited counterfactual of a shadow call, then the call forwarded as in production. */
async function answerCounterfactual(
  deps: InspectDependencies,
  exchange: AgentExchange,
  block: Block,
  held: boolean,
): Promise<void> {
  const { tenant, call, inspectionId } = exchange;
  const code: ErrorCode = block.code;
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
    decision: held ? 'require_human_approval' : 'deny',
    reasonCode: code,
    auditId,
  };
  if (block.signal) view.signal = block.signal;
  if (block.decision) addPolicyFields(view, block.decision);
  return answerAllow(deps, exchange, PLAIN_ALLOW, null, view);
}
