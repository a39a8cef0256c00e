// One governed call on its way through the pipeline, and the one place a decision leaves: every
// step works with an exchange and ends in `sendAnswer`, which counts and logs the decision and
// hands the answer, with the registry's status for its reason code, to the exchange's outlet.
// The outlet is what makes one pipeline serve two surfaces: the inspect route sends the answer
// as its HTTP answer; the MCP proxy turns it into a JSON-RPC message on the client's stream (and
// forwards allowed calls over its own upstream session).
import { ERROR_CODES, type ErrorCode } from '../../shared/errors/index.js';
import type { NplDecision } from '../../shared/npl/index.js';
import type { DetectorSignal } from '../inspection/index.js';
import type { LimitHit } from '../limits/usage-limiter.js';
import { observeInspectDuration } from '../metrics/gateway-metrics.js';
import type { CompiledAgent, CompiledServer, CompiledTenant } from '../store/compiled-snapshot.js';
import type { InspectAnswer } from './answers.js';
import type { InspectDependencies } from './dependencies.js';
import type { InspectRequest } from './request.js';

/** Where a decision goes. */
export interface DecisionOutlet {
  /** Seconds since the call arrived (the decision's duration metric). */
  elapsedSeconds(): number;
  /** Delivers the final answer with its HTTP status. */
  deliver(answer: InspectAnswer, status: number): void;
  /**
   * Forwards an allowed production or shadow call itself (the MCP proxy, over the client's
   * upstream session) and delivers its outcome; absent: forward.ts forwards it and delivers the
   * upstream's response in the answer.
   */
  forward?(exchange: AgentExchange, answer: InspectAnswer): Promise<void>;
}

export interface Exchange {
  readonly outlet: DecisionOutlet;
  readonly tenant: CompiledTenant;
  readonly call: InspectRequest;
  readonly inspectionId: string;
}

/** An exchange whose agent is known and may act. */
export interface AgentExchange extends Exchange {
  readonly agent: CompiledAgent;
  readonly server: CompiledServer | undefined;
}

/** Why a call is blocked: a registry code, a message, and what fired. */
export interface Block {
  readonly code: ErrorCode;
  readonly message: string;
  readonly signal?: DetectorSignal | undefined;
  readonly decision?: NplDecision | undefined;
  /** A usage limit refused the call: the limit, its usage and when it resets. */
  readonly limit?: LimitHit | undefined;
}

/** Where an answer goes and what it is about (the call is unknown for a malformed body). */
export interface AnswerTarget {
  readonly outlet: DecisionOutlet;
  readonly tenant: CompiledTenant;
  readonly call?: InspectRequest | undefined;
}

/** The HTTP status of an answer: 200/202 for decisions that pass, else the code's registry status. */
export function answerStatus(answer: InspectAnswer): number {
  if (answer.reasonCode === null) return 200;
  return ERROR_CODES[answer.reasonCode].status ?? 500;
}

/**
 * Delivers the answer with its status, counts it (the /metrics histogram and the decision tally
 * of decisionStats), and logs the decision in one structured line:
 * denies, holds and failed forwards at info, plain allows at debug (they are counted in
 * agent_gateway_inspect_duration_seconds either way). The line names the call, never its
 * arguments, headers or keys.
 */
export function sendAnswer(
  deps: Pick<InspectDependencies, 'metrics' | 'logger'>,
  target: AnswerTarget,
  answer: InspectAnswer,
): void {
  const { outlet } = target;
  const seconds = outlet.elapsedSeconds();
  observeInspectDuration(deps.metrics, answer, seconds);
  const call = target.call;
  deps.metrics.decisions.count(
    target.tenant.id,
    answer.decision,
    call?.serverId,
    call?.toolName,
    answer.reasonCode,
  );
  const level = answer.reasonCode === null ? 'debug' : 'info';
  if (deps.logger.isLevelEnabled(level)) {
    deps.logger[level](
      {
        inspectionId: answer.inspectionId,
        tenantId: target.tenant.id,
        agentId: call?.agentId ?? null,
        serverId: call?.serverId ?? null,
        tool: call?.toolName ?? null,
        mode: answer.executionMode,
        decision: answer.decision,
        reasonCode: answer.reasonCode,
        enforced: answer.enforced,
        ms: Math.round(seconds * 1e6) / 1e3,
      },
      'inspect decision',
    );
  }
  outlet.deliver(answer, answerStatus(answer));
}
