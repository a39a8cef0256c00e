// Allowed calls: simulated (simulation mode, or an NPL SIMULATE decision outside shadow) with the
// tenant's mock result, otherwise forwarded to the upstream (forward.ts) — unless the caller
// runs the tool itself (`forward: false`): then the decision is the whole answer, no upstream is
// contacted and no forward token is minted.
import type { NplDecision } from '../../shared/npl/index.js';
import type { CompiledServer } from '../store/compiled-snapshot.js';
import { addPolicyFields, type InspectAnswer, type ShadowView } from './answers.js';
import type { InspectDependencies } from './dependencies.js';
import { type AgentExchange, sendAnswer } from './exchange.js';
import { forwardCall } from './forward.js';
import type { PipelineOutcome } from './pipeline.js';
import type { InspectRequest } from './request.js';

export type AllowOutcome = Extract<PipelineOutcome, { kind: 'allow' }>;

/** An allow with nothing to add: an approved resubmission, or a shadow call being forwarded. */
export const PLAIN_ALLOW: AllowOutcome = Object.freeze({
  kind: 'allow',
  simulate: false,
  decision: null,
});

export function answerAllow(
  deps: InspectDependencies,
  exchange: AgentExchange,
  outcome: AllowOutcome,
  approvedDecision: NplDecision | null,
  shadowView?: ShadowView,
): Promise<void> | void {
  const { outlet, server, call, inspectionId } = exchange;
  const answer: InspectAnswer = {
    decision: 'allow',
    reasonCode: null,
    inspectionId,
    executionMode: call.mode,
    enforced: shadowView === undefined,
  };
  const decision = approvedDecision ?? outcome.decision;
  if (decision) addPolicyFields(answer, decision);
  if (shadowView) answer.shadow = shadowView;
  if (call.mode === 'simulation' || outcome.simulate) {
    answer.simulated = true;
    answer.response = { jsonrpc: '2.0', id: call.rpc.id, result: simulatedResult(server, call) };
    return sendAnswer(deps, exchange, answer);
  }
  if (!call.forward) {
    answer.forwarded = false;
    return sendAnswer(deps, exchange, answer);
  }
  if (outlet.forward) return outlet.forward(exchange, answer);
  return forwardCall(deps, exchange, answer);
}

/** The tenant's registered mock result for the tool, or a generic one marked as simulated. */
function simulatedResult(server: CompiledServer | undefined, call: InspectRequest): unknown {
  const mock = server?.mockResults.get(call.toolName);
  if (mock !== undefined) return mock;
  return {
    content: [{ type: 'text', text: `[simulated] ${call.toolName} was not executed` }],
    isError: false,
    _meta: { simulated: true },
  };
}
