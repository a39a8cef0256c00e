// The pure parts of the usage-limit step (limits.ts): which limits a call meets, the call as the
// limiter counts it, and the refusal a failed check makes. Apart from the step so the hold
// (hold.ts), the step and shadow mode share them without importing one another.
import { formatErrorMessage } from '../../shared/errors/index.js';
import { MCP_METHODS } from '../../shared/mcp/protocol.js';
import type { CompiledLimit } from '../limits/compiled-limits.js';
import type { LimitCall, LimitCheck } from '../limits/usage-limiter.js';
import type { CompiledTenant } from '../store/compiled-snapshot.js';
import type { Block } from './exchange.js';
import type { InspectRequest } from './request.js';

const NO_LIMITS: readonly CompiledLimit[] = Object.freeze([]);

/** The limits a call meets: tools/call only, matched by server and tool. */
export function limitsOf(tenant: CompiledTenant, call: InspectRequest): readonly CompiledLimit[] {
  if (call.rpc.method !== MCP_METHODS.TOOLS_CALL) return NO_LIMITS;
  return tenant.policy.limits.matching(call.serverId, call.toolName);
}

export function limitCallOf(tenant: CompiledTenant, call: InspectRequest): LimitCall {
  return {
    tenantId: tenant.id,
    agentId: call.agentId,
    toolName: call.toolName,
    args: call.rpc.arguments,
  };
}

/** Why a failed check refuses the call (every failure but a REQUIRE_HUMAN limit's). */
export function limitBlock(check: Exclude<LimitCheck, { ok: true }>): Block {
  const { limitId, sumArgument } = check.limit.limit;
  switch (check.reason) {
    case 'invalid_amount':
      return {
        code: 'BUDGET_ARGUMENT_INVALID',
        message: formatErrorMessage('BUDGET_ARGUMENT_INVALID', {
          limitId,
          sumArgument: sumArgument ?? '',
          problem: check.problem,
        }),
      };
    case 'unavailable':
      return {
        code: 'LIMIT_COUNTER_UNAVAILABLE',
        message: formatErrorMessage('LIMIT_COUNTER_UNAVAILABLE', {
          limitId,
          detail: check.error.message,
        }),
      };
    default: {
      const { hit } = check;
      const code = check.kind === 'calls' ? 'RATE_LIMIT_EXCEEDED' : 'BUDGET_EXCEEDED';
      return {
        code,
        message: formatErrorMessage(code, {
          limitId,
          used: hit.used,
          max: hit.max,
          windowSeconds: hit.windowSeconds,
          requested: hit.requested,
          resetsAt: hit.resetsAt,
        }),
        limit: hit,
      };
    }
  }
}
