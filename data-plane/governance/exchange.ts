// One inspect call on its way through the route, and the one place an answer leaves: every step
// works with an exchange and ends in `sendAnswer`, which counts and logs the decision and sends
// the answer with the registry's status for its reason code.
import type { FastifyReply } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '../../shared/errors/index.js';
import type { NplDecision } from '../../shared/npl/index.js';
import type { DetectorSignal } from '../inspection/index.js';
import { observeInspectDuration } from '../plugins/metrics.js';
import type { CompiledAgent, CompiledServer, CompiledTenant } from '../store/compiled-snapshot.js';
import type { InspectAnswer } from './answers.js';
import type { InspectDependencies } from './dependencies.js';
import type { InspectRequest } from './request.js';

export interface Exchange {
  readonly reply: FastifyReply;
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
}

/** Where an answer goes and what it is about (the call is unknown for a malformed body). */
export interface AnswerTarget {
  readonly reply: FastifyReply;
  readonly tenant: CompiledTenant;
  readonly call?: InspectRequest | undefined;
}

/** The HTTP status of an answer: 200/202 for decisions that pass, else the code's registry status. */
export function answerStatus(answer: InspectAnswer): number {
  if (answer.reasonCode === null) return 200;
  return ERROR_CODES[answer.reasonCode].status ?? 500;
}

/**
 * Sends the answer with its status, counts it, and logs the decision in one structured line:
 * denies, holds and failed forwards at info, plain allows at debug (they are counted in
 * agent_gateway_inspect_duration_seconds either way). The line names the call, never its
 * arguments, headers or keys.
 */
export function sendAnswer(
  deps: Pick<InspectDependencies, 'metrics' | 'logger'>,
  target: AnswerTarget,
  answer: InspectAnswer,
): FastifyReply {
  const { reply } = target;
  const seconds = reply.elapsedTime / 1000;
  observeInspectDuration(deps.metrics, answer, seconds);
  const level = answer.reasonCode === null ? 'debug' : 'info';
  if (deps.logger.isLevelEnabled(level)) {
    const call = target.call;
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
  return reply.code(answerStatus(answer)).send(answer);
}
