// Blocked calls: the deny is appended to the audit trail and durable before the answer leaves
// (spec §4.1), and the answer carries the JSON-RPC error an MCP client understands; when the
// trail cannot be written the answer is that failure, but for an unreachable usage counter
// (answerUnaudited below). A killed agent's call is the exception: it is refused because its
// identity is revoked, an authentication refusal, audited through the bounded refusal path (the
// first of a minute an entry of its own, the rest counted: docs/security.md, "Refusal
// auditing"), so a poller cannot flood the trail.
import { AUDIT_ACTIONS, type AuditAction, type JsonObject } from '../../shared/audit/index.js';
import type { FieldIssue } from '../../shared/errors/index.js';
import type { ExecutionMode } from '../../shared/snapshot/index.js';
import type { CompiledTenant } from '../store/compiled-snapshot.js';
import { buildDenyAnswer } from './answers.js';
import type { InspectDependencies } from './dependencies.js';
import { type Block, type DecisionOutlet, type Exchange, sendAnswer } from './exchange.js';
import type { InspectRequest } from './request.js';

export async function answerDeny(
  deps: InspectDependencies,
  exchange: Exchange,
  block: Block,
): Promise<void> {
  const { tenant, call, inspectionId } = exchange;
  const auditId = await auditBlock(deps, tenant, call, inspectionId, call.mode, block).catch(
    (error: unknown) => answerUnaudited(deps, block, error),
  );
  return sendAnswer(
    deps,
    exchange,
    buildDenyAnswer({
      inspectionId,
      mode: call.mode,
      rpcId: call.rpc.id,
      code: block.code,
      message: block.message,
      auditId,
      signal: block.signal,
      decision: block.decision,
      limit: block.limit,
    }),
  );
}

/**
 * A deny whose entry could not be written is answered by the audit's failure (500
 * AUDIT_WRITE_FAILED: the caller must not report it audited), except a usage counter the data
 * plane cannot reach: that counter is on the database the trail is on, so its refusal (503
 * LIMIT_COUNTER_UNAVAILABLE, fail closed, retryable) would otherwise never be seen. It is answered
 * without an auditId and logged at error level with what it held, as the refusal auditor does.
 */
function answerUnaudited(deps: InspectDependencies, block: Block, error: unknown): undefined {
  if (block.code !== 'LIMIT_COUNTER_UNAVAILABLE') throw error;
  deps.logger.error(
    { err: error, reasonCode: block.code, detail: block.message },
    'audit of a refusal failed: answered without an audit entry',
  );
  return undefined;
}

/** A body that is not an inspect request: audited, answered 400 MCP_MALFORMED_RPC. */
export async function answerMalformed(
  deps: InspectDependencies,
  outlet: DecisionOutlet,
  tenant: CompiledTenant,
  inspectionId: string,
  problem: {
    message: string;
    rpcId: string | number | null;
    hint?: string | undefined;
    issues?: readonly FieldIssue[] | undefined;
    /** The page that describes the request the caller sent. */
    docs?: string | undefined;
  },
): Promise<void> {
  const code = 'MCP_MALFORMED_RPC';
  const auditId = await appendDenyAudit(deps, tenant, undefined, inspectionId, null, {
    code,
    message: problem.message,
  });
  return sendAnswer(
    deps,
    { outlet, tenant },
    buildDenyAnswer({
      inspectionId,
      mode: null,
      rpcId: problem.rpcId,
      code,
      message: problem.message,
      hint: problem.hint,
      issues: problem.issues,
      docs: problem.docs,
      auditId,
    }),
  );
}

/**
 * Audits a block: a killed agent's (AGENT_REVOKED) as a bounded refusal, resolving with the id of
 * its entry when it has one of its own; every other as `inspect.deny`, durable.
 */
export function auditBlock(
  deps: InspectDependencies,
  tenant: CompiledTenant,
  call: InspectRequest | undefined,
  inspectionId: string,
  mode: ExecutionMode | null,
  block: Block,
): Promise<string | undefined> {
  if (block.code === 'AGENT_REVOKED' && call && deps.refusals) {
    return auditRevokedAgent(deps, tenant.id, call.agentId, block.message);
  }
  return appendDenyAudit(deps, tenant, call, inspectionId, mode, block);
}

/** A killed agent's call refused (AGENT_REVOKED), through the bounded refusal path. */
export function auditRevokedAgent(
  deps: Pick<InspectDependencies, 'refusals' | 'surfaceRoute'>,
  tenantId: string,
  agentId: string,
  detail: string,
): Promise<string | undefined> {
  if (!deps.refusals) return Promise.resolve(undefined);
  return deps.refusals.refuse({
    tenantId,
    subjectType: 'agent',
    subject: agentId,
    code: 'AGENT_REVOKED',
    route: deps.surfaceRoute ?? '',
    detail,
  });
}

/** Appends the deny (or shadow counterfactual) and resolves once it is durable. */
export async function appendDenyAudit(
  deps: InspectDependencies,
  tenant: CompiledTenant,
  call: InspectRequest | undefined,
  inspectionId: string,
  mode: ExecutionMode | null,
  block: Block,
  action: AuditAction = AUDIT_ACTIONS.INSPECT_DENY,
): Promise<string> {
  const metadata: JsonObject = {
    actorType: 'agent',
    decision: 'deny',
    reasonCode: block.code,
    message: block.message,
    inspectionId,
  };
  if (mode) metadata.mode = mode;
  if (call) {
    metadata.tool = call.toolName;
    metadata.method = call.rpc.method;
    metadata.serverId = call.serverId;
    metadata.executionId = call.executionId;
  }
  if (block.signal) metadata.signal = { ...block.signal };
  if (block.limit) metadata.limit = { ...block.limit };
  if (block.decision) {
    metadata.ruleId = block.decision.ruleId;
    metadata.policy = block.decision.policyUri;
    metadata.alertSeverity = block.decision.alertSeverity;
  }
  const entry = await deps.audit.append({
    tenantId: tenant.id,
    action,
    resourceType: 'agent',
    resourceId: call?.agentId ?? 'unknown',
    metadata,
  });
  return entry.id;
}
