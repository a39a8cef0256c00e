// The decision for one parsed call, shared by the inspect route and the MCP proxy (one pipeline,
// two surfaces): `screenCall` holds the checks that come before identity (a forwarded upstream
// token, an unknown or killed agent), `governKnownAgent` everything from the mode check on. Each
// surface authenticates its caller and proves identity its own way in between: inspect with the
// credential and Agent-Proof of the body (identity.ts), the proxy with the access token it
// accepted.
import type { IncomingHttpHeaders } from 'node:http';
import { formatErrorMessage } from '../../shared/errors/index.js';
import type { CompiledAgent } from '../store/compiled-snapshot.js';
import { answerAllow } from './allow.js';
import { answerDeny } from './deny.js';
import type { InspectDependencies } from './dependencies.js';
import type { AgentExchange, Block, Exchange } from './exchange.js';
import { holdOrRelease, nplHold } from './hold.js';
import type { CallDelegation } from './identity.js';
import { limitBlock, limitsOf } from './limit-checks.js';
import { answerWithinLimits, usageContextOf } from './limits.js';
import { runPipeline } from './pipeline.js';
import { answerShadow } from './shadow.js';
import { refusePassthrough } from './token-passthrough.js';

/**
 * The agent a call may proceed with, or why it may not: an upstream token presented for
 * forwarding (MCP_TOKEN_PASSTHROUGH, or MCP_META_TOO_LARGE for a `_meta` too large to check), an
 * agent unknown in the tenant, or a killed one.
 */
export function screenCall(
  exchange: Exchange,
  headers: IncomingHttpHeaders,
): Block | CompiledAgent {
  const { tenant, call } = exchange;
  const passthrough = refusePassthrough(headers, call.rpc.params);
  if (passthrough) return passthrough;
  const agent = tenant.agents.get(call.agentId);
  if (!agent) {
    return {
      code: 'AGENT_UNKNOWN',
      message: formatErrorMessage('AGENT_UNKNOWN', { agentId: call.agentId }),
    };
  }
  if (agent.killed) {
    return {
      code: 'AGENT_REVOKED',
      message: formatErrorMessage('AGENT_REVOKED', { agentId: agent.id }),
    };
  }
  return agent;
}

export function isBlock(value: Block | CompiledAgent): value is Block {
  return 'code' in value;
}

/** From the mode check on, for an agent that exists, is not killed and (if asked) proved who it is. */
export function governKnownAgent(
  deps: InspectDependencies,
  exchange: Exchange,
  agent: CompiledAgent,
  delegation: CallDelegation,
): Promise<void> | void {
  const { tenant, call } = exchange;
  if (!tenant.policy.allowedModes.has(call.mode)) {
    return answerDeny(deps, exchange, {
      code: 'EXECUTION_MODE_NOT_ALLOWED',
      message: formatErrorMessage('EXECUTION_MODE_NOT_ALLOWED', { mode: call.mode }),
    });
  }
  const limits = limitsOf(tenant, call);
  // A call under no limit stays synchronous up to its answer (the hot path allocates no promise).
  if (limits.length === 0) return decide(deps, exchange, agent, delegation, limits, undefined);
  return governUnderLimits(deps, exchange, agent, delegation, limits);
}

async function governUnderLimits(
  deps: InspectDependencies,
  exchange: Exchange,
  agent: CompiledAgent,
  delegation: CallDelegation,
  limits: ReturnType<typeof limitsOf>,
): Promise<void> {
  let usage: Awaited<ReturnType<typeof usageContextOf>>;
  try {
    usage = await usageContextOf(deps, exchange.tenant, exchange.call, limits);
  } catch (error) {
    // The policies read usage the database cannot give: fail closed, as an unreachable counter.
    const limit = limits[0] as (typeof limits)[number];
    return answerDeny(
      deps,
      exchange,
      limitBlock({ ok: false, reason: 'unavailable', limit, error: error as Error }),
    );
  }
  return decide(deps, exchange, agent, delegation, limits, usage);
}

/** The pipeline, then what its outcome calls for. */
function decide(
  deps: InspectDependencies,
  exchange: Exchange,
  agent: CompiledAgent,
  delegation: CallDelegation,
  limits: ReturnType<typeof limitsOf>,
  usage: Awaited<ReturnType<typeof usageContextOf>>,
): Promise<void> | void {
  const { outlet, tenant, call, inspectionId } = exchange;
  const server = tenant.servers.get(call.serverId);
  const outcome = runPipeline(tenant, agent, server, call, delegation, usage);
  const withAgent: AgentExchange = { outlet, tenant, call, inspectionId, agent, server };
  if (call.mode === 'shadow') return answerShadow(deps, withAgent, outcome, limits);
  if (outcome.kind === 'deny') return answerDeny(deps, withAgent, outcome);
  if (outcome.kind === 'require_human') {
    return holdOrRelease(deps, withAgent, nplHold(withAgent, outcome.decision));
  }
  if (limits.length > 0) return answerWithinLimits(deps, withAgent, outcome, limits);
  return answerAllow(deps, withAgent, outcome, null);
}
