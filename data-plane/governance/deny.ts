// Blocked calls: the deny is appended to the audit trail and durable before the answer leaves
// (spec §4.1), and the answer carries the JSON-RPC error an MCP client understands.
import { AUDIT_ACTIONS, type AuditAction, type JsonObject } from '../../shared/audit/index.js';
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
  const auditId = await appendDenyAudit(deps, tenant, call, inspectionId, call.mode, block);
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
    }),
  );
}

/** A body that is not an inspect request: audited, answered 400 MCP_MALFORMED_RPC. */
export async function answerMalformed(
  deps: InspectDependencies,
  outlet: DecisionOutlet,
  tenant: CompiledTenant,
  inspectionId: string,
  problem: { message: string; rpcId: string | number | null; hint?: string | undefined },
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
      auditId,
    }),
  );
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
