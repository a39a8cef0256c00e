// Calls an NPL rule holds for a human (REQUIRE_HUMAN): the first submission stores the call with
// its digest and answers 202 with the approval; a resubmission naming `approval_id` passes once,
// only if that approval is approved, unexpired, of this agent and for the same call digest. A call
// marked `resumeOpenApproval` (the MCP proxy's) reuses the open approval of the same call instead
// of creating another, so a client retrying after its wait ended keeps the one an operator sees.
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
import { answerAllow, PLAIN_ALLOW } from './allow.js';
import { addPolicyFields, type InspectAnswer } from './answers.js';
import { computeCallDigest } from './call-digest.js';
import { answerDeny } from './deny.js';
import type { InspectDependencies } from './dependencies.js';
import { type AgentExchange, sendAnswer } from './exchange.js';

export async function holdOrRelease(
  deps: InspectDependencies,
  exchange: AgentExchange,
  decision: NplDecision,
): Promise<void> {
  const { tenant, agent, call, inspectionId } = exchange;
  const digest = computeCallDigest({
    tenantId: tenant.id,
    agentId: agent.id,
    serverId: call.serverId,
    toolName: call.toolName,
    arguments: call.rpc.arguments,
  });
  if (call.approvalId !== undefined) {
    const outcome = await consumeApproval(deps.db, {
      tenantId: tenant.id,
      agentId: agent.id,
      id: call.approvalId,
      callDigest: digest,
    });
    if (!outcome.ok) {
      return answerDeny(deps, exchange, {
        code: outcome.code,
        message: formatErrorMessage(outcome.code, { approvalId: call.approvalId }),
        decision,
      });
    }
    await deps.audit.append({
      tenantId: tenant.id,
      action: AUDIT_ACTIONS.APPROVAL_USED,
      resourceType: 'approval',
      resourceId: outcome.approval.id,
      metadata: { actorType: 'agent', tool: call.toolName, inspectionId, agentId: agent.id },
    });
    return answerAllow(deps, exchange, PLAIN_ALLOW, decision);
  }
  if (call.resumeOpenApproval) {
    const open = await findOpenApproval(deps.db, {
      tenantId: tenant.id,
      agentId: agent.id,
      callDigest: digest,
    });
    if (open) return sendAnswer(deps, exchange, heldAnswer(exchange, decision, open, undefined));
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
    policyUri: decision.policyUri || null,
    ruleId: decision.ruleId,
    reason: decision.reason,
    ttlMs: tenant.policy.approvalTtlMs,
  });
  deps.events.publish({
    type: EVENT_TYPES.APPROVAL_CREATED,
    tenantId: tenant.id,
    approval: { id: approval.id, agentId: agent.id, status: approval.status },
  });
  const auditEntry = await deps.audit.append({
    tenantId: tenant.id,
    action: AUDIT_ACTIONS.APPROVAL_REQUESTED,
    resourceType: 'approval',
    resourceId: approval.id,
    metadata: {
      actorType: 'agent',
      // As a deny records its decision: the trail's decision filter finds held calls by it.
      decision: 'require_human_approval',
      reasonCode: 'NPL_REQUIRE_HUMAN',
      tool: call.toolName,
      agentId: agent.id,
      serverId: call.serverId,
      inspectionId,
      ruleId: decision.ruleId,
      policy: decision.policyUri,
      expiresAt: approval.expiresAt.toISOString(),
    },
  });
  return sendAnswer(deps, exchange, heldAnswer(exchange, decision, approval, auditEntry.id));
}

/** The 202 answer of a held call: the approval that holds it and the rule that asked for it. */
function heldAnswer(
  exchange: AgentExchange,
  decision: NplDecision,
  approval: ApprovalRecord,
  auditId: string | undefined,
): InspectAnswer {
  const answer: InspectAnswer = {
    decision: 'require_human_approval',
    reasonCode: 'NPL_REQUIRE_HUMAN',
    inspectionId: exchange.inspectionId,
    executionMode: exchange.call.mode,
    enforced: true,
    message: formatErrorMessage('NPL_REQUIRE_HUMAN', { reason: decision.reason }),
    approval: {
      id: approval.id,
      status: approval.status,
      expiresAt: approval.expiresAt.toISOString(),
    },
  };
  if (auditId !== undefined) answer.auditId = auditId;
  addPolicyFields(answer, decision);
  return answer;
}
