// Calls held for a human: by an NPL rule (REQUIRE_HUMAN) or a usage limit whose action is
// REQUIRE_HUMAN (limits.ts). The first submission stores the call with its digest and answers 202
// with the approval; a resubmission naming `approval_id` passes once, only if that approval is
// approved, unexpired, of this agent and for the same call digest, and it counts in every usage
// limit it matches whatever that exceeds (a human approved it). A call marked
// `resumeOpenApproval` (the MCP proxy's) reuses the open approval of the same call instead of
// creating another, so a client retrying after its wait ended keeps the one an operator sees.

import type { JsonObject } from '../../shared/audit/index.js';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { formatErrorMessage } from '../../shared/errors/index.js';
import { EVENT_TYPES } from '../../shared/events/index.js';
import type { NplDecision } from '../../shared/npl/index.js';
import {
  type ApprovalRecord,
  consumeApproval,
  createApproval,
  findOpenApproval,
} from '../../storage/tables/approvals.js';
import type { CompiledLimit } from '../limits/compiled-limits.js';
import type { LimitHit } from '../limits/usage-limiter.js';
import { answerAllow, PLAIN_ALLOW } from './allow.js';
import { addPolicyFields, type InspectAnswer } from './answers.js';
import { computeCallDigest } from './call-digest.js';
import { answerDeny } from './deny.js';
import type { InspectDependencies } from './dependencies.js';
import { type AgentExchange, sendAnswer } from './exchange.js';
import { limitBlock, limitCallOf, limitsOf } from './limit-checks.js';

/** Why a call is held: the NPL rule that asked for a human, or the usage limit it would exceed. */
export interface Hold {
  readonly code: 'NPL_REQUIRE_HUMAN' | 'LIMIT_REQUIRE_HUMAN';
  readonly message: string;
  readonly decision?: NplDecision;
  readonly limit?: LimitHit;
  /** The usage limits the call matches: its approved resubmission counts in them. */
  readonly limits: readonly CompiledLimit[];
}

/** The hold an NPL REQUIRE_HUMAN decision makes. */
export function nplHold(exchange: AgentExchange, decision: NplDecision): Hold {
  return {
    code: 'NPL_REQUIRE_HUMAN',
    message: formatErrorMessage('NPL_REQUIRE_HUMAN', { reason: decision.reason }),
    decision,
    limits: limitsOf(exchange.tenant, exchange.call),
  };
}

export async function holdOrRelease(
  deps: InspectDependencies,
  exchange: AgentExchange,
  hold: Hold,
): Promise<void> {
  const { tenant, agent, call, inspectionId } = exchange;
  const decision = hold.decision;
  const digest = computeCallDigest({
    tenantId: tenant.id,
    agentId: agent.id,
    serverId: call.serverId,
    toolName: call.toolName,
    arguments: call.rpc.arguments,
  });
  if (call.approvalId !== undefined) {
    // Counted before the approval is used, so a call that cannot be counted keeps its approval.
    const counted =
      hold.limits.length === 0
        ? undefined
        : await deps.usage.reserve(limitCallOf(tenant, call), hold.limits, { force: true });
    if (counted !== undefined && !counted.ok)
      return answerDeny(deps, exchange, limitBlock(counted));
    const outcome = await consumeApproval(deps.db, {
      tenantId: tenant.id,
      agentId: agent.id,
      id: call.approvalId,
      callDigest: digest,
    });
    if (!outcome.ok) {
      await counted?.reservation.release();
      return answerDeny(deps, exchange, {
        code: outcome.code,
        message: formatErrorMessage(outcome.code, { approvalId: call.approvalId }),
        decision,
      });
    }
    // Whoever watches the approval (its console page) learns that the call was made.
    deps.events.publish({
      type: EVENT_TYPES.APPROVAL_RESOLVED,
      tenantId: tenant.id,
      approval: { id: outcome.approval.id, agentId: agent.id, status: outcome.approval.status },
    });
    await deps.audit.append({
      tenantId: tenant.id,
      action: AUDIT_ACTIONS.APPROVAL_USED,
      resourceType: 'approval',
      resourceId: outcome.approval.id,
      metadata: { actorType: 'agent', tool: call.toolName, inspectionId, agentId: agent.id },
    });
    return answerAllow(deps, exchange, PLAIN_ALLOW, decision ?? null);
  }
  if (call.resumeOpenApproval) {
    const open = await findOpenApproval(deps.db, {
      tenantId: tenant.id,
      agentId: agent.id,
      callDigest: digest,
    });
    if (open) return sendAnswer(deps, exchange, heldAnswer(exchange, hold, open, undefined));
  }
  const approval = await createApproval(deps.db, {
    tenantId: tenant.id,
    agentId: agent.id,
    executionId: call.executionId,
    serverId: call.serverId,
    toolName: call.toolName,
    method: call.rpc.method,
    callDigest: digest,
    arguments: call.rpc.arguments,
    policyUri: decision?.policyUri || null,
    ruleId: decision?.ruleId ?? null,
    reason: decision?.reason ?? hold.message,
    ttlMs: tenant.policy.approvalTtlMs,
    limitHit: hold.limit ? { ...hold.limit } : null,
  });
  deps.events.publish({
    type: EVENT_TYPES.APPROVAL_CREATED,
    tenantId: tenant.id,
    approval: { id: approval.id, agentId: agent.id, status: approval.status },
  });
  const metadata: JsonObject = {
    actorType: 'agent',
    // As a deny records its decision: the trail's decision filter finds held calls by it.
    decision: 'require_human_approval',
    reasonCode: hold.code,
    tool: call.toolName,
    agentId: agent.id,
    serverId: call.serverId,
    inspectionId,
    expiresAt: approval.expiresAt.toISOString(),
  };
  if (decision) {
    metadata.ruleId = decision.ruleId;
    metadata.policy = decision.policyUri;
  }
  if (hold.limit) metadata.limit = { ...hold.limit };
  const auditEntry = await deps.audit.append({
    tenantId: tenant.id,
    action: AUDIT_ACTIONS.APPROVAL_REQUESTED,
    resourceType: 'approval',
    resourceId: approval.id,
    metadata,
  });
  return sendAnswer(deps, exchange, heldAnswer(exchange, hold, approval, auditEntry.id));
}

/** The 202 answer of a held call: the approval that holds it and the rule that asked for it. */
function heldAnswer(
  exchange: AgentExchange,
  hold: Hold,
  approval: ApprovalRecord,
  auditId: string | undefined,
): InspectAnswer {
  const answer: InspectAnswer = {
    decision: 'require_human_approval',
    reasonCode: hold.code,
    inspectionId: exchange.inspectionId,
    executionMode: exchange.call.mode,
    enforced: true,
    message: hold.message,
    approval: {
      id: approval.id,
      status: approval.status,
      expiresAt: approval.expiresAt.toISOString(),
    },
  };
  if (auditId !== undefined) answer.auditId = auditId;
  if (hold.decision) addPolicyFields(answer, hold.decision);
  if (hold.limit) answer.limit = hold.limit;
  return answer;
}
