// The inspection pipeline of spec §1.3 as one pure function over the compiled snapshot: no I/O,
// no clock. Steps run in the spec's order and the first failing one decides; the route does the
// I/O the outcome calls for (audit, approval, forward). Shadow mode runs the same function and
// treats a failing outcome as the counterfactual decision. A deny's message is always its code's
// template from the error registry (shared/errors/codes.ts), never text written here.

import { type ErrorCode, type ErrorParams, formatErrorMessage } from '../../shared/errors/index.js';
import { MCP_METHODS } from '../../shared/mcp/protocol.js';
import {
  buildFailClosedPolicy,
  type CompiledPolicy,
  evaluatePolicies,
  NPL_RULE_IDS,
  type NplContext,
  type NplDecision,
} from '../../shared/npl/index.js';
import type { DetectorSignal, ToolCallView } from '../inspection/index.js';
import type { CompiledAgent, CompiledServer, CompiledTenant } from '../store/compiled-snapshot.js';
import type { CallDelegation } from './identity.js';
import type { InspectRequest } from './request.js';

export type PipelineOutcome =
  | {
      readonly kind: 'deny';
      readonly code: ErrorCode;
      readonly message: string;
      readonly signal?: DetectorSignal;
      readonly decision?: NplDecision;
    }
  | { readonly kind: 'require_human'; readonly decision: NplDecision }
  | { readonly kind: 'allow'; readonly simulate: boolean; readonly decision: NplDecision | null };

const ALLOW_WITHOUT_POLICY: PipelineOutcome = Object.freeze({
  kind: 'allow',
  simulate: false,
  decision: null,
});

export function runPipeline(
  tenant: CompiledTenant,
  agent: CompiledAgent,
  server: CompiledServer | undefined,
  request: InspectRequest,
  delegation: CallDelegation,
  usage?: NplContext['usage'],
): PipelineOutcome {
  const policy = tenant.policy;
  const { rpc } = request;
  // Step 2: the target server is on the tenant's trusted whitelist.
  if (!policy.trustedServers.has(request.serverId)) {
    return deny('MCP_SERVER_NOT_WHITELISTED', { serverId: request.serverId });
  }
  // Step 3: the method and the tool are not blocked, and the tool is one the agent may use.
  if (policy.isMethodBlocked(rpc.method)) {
    return deny('MCP_METHOD_BLOCKED', { kind: 'method', name: rpc.method });
  }
  if (policy.isToolBlocked(request.toolName)) {
    return deny('MCP_METHOD_BLOCKED', { kind: 'tool', name: request.toolName });
  }
  if (rpc.method === MCP_METHODS.TOOLS_CALL && !agent.isToolAllowed(request.toolName)) {
    return deny('AGENT_TOOL_NOT_ALLOWED', { toolName: request.toolName });
  }
  // Step 3 still: a tool whose definition changed since approval, or that nobody approved under
  // approved_only, is held (docs/tool-pinning.md).
  const held =
    rpc.method === MCP_METHODS.TOOLS_CALL ? server?.toolVerdict(request.toolName) : undefined;
  if (held !== undefined) {
    const code = held === 'changed' ? 'MCP_TOOL_DEFINITION_CHANGED' : 'MCP_TOOL_NOT_APPROVED';
    return deny(code, { tool: request.toolName, serverId: request.serverId });
  }
  const view: ToolCallView = {
    method: rpc.method,
    toolName: request.toolName,
    args: rpc.method === MCP_METHODS.TOOLS_CALL ? rpc.arguments : rpc.params,
    annotations: server?.toolAnnotations.get(request.toolName),
  };
  // Step 4: the operation is not destructive (when the tenant denies destructive operations).
  if (policy.denyDestructive) {
    const signal = policy.detectDestructive(view);
    if (signal) {
      return deny('MCP_DESTRUCTIVE_OP_BLOCKED', { signal: signal.detail }, signal);
    }
  }
  // Between steps 4 and 5: the data-exfiltration heuristics the tenant switched on.
  const leak = policy.detectExfiltration(view);
  if (leak) {
    return deny('MCP_DATA_EXFILTRATION_SUSPECTED', { signal: leak.detail }, leak);
  }
  // Step 5: NPL, the tenant's pins plus the one the request names; the most restrictive wins.
  const policies = effectivePolicies(tenant, request.policy);
  if (policies.length === 0) return ALLOW_WITHOUT_POLICY;
  const decision = evaluatePolicies(
    policies,
    buildNplContext(tenant, agent, server, request, delegation, usage),
  );
  switch (decision.action) {
    case 'BLOCK':
      return decision.ruleId === NPL_RULE_IDS.registryFailClosed
        ? denyByPolicy('NPL_REGISTRY_FAIL_CLOSED', decision)
        : denyByPolicy('NPL_POLICY_BLOCK', decision);
    case 'REQUIRE_HUMAN':
      return { kind: 'require_human', decision };
    case 'SIMULATE':
      return { kind: 'allow', simulate: true, decision };
    default:
      return { kind: 'allow', simulate: false, decision };
  }
}

function effectivePolicies(
  tenant: CompiledTenant,
  requested: string | undefined,
): readonly CompiledPolicy[] {
  if (requested === undefined) return tenant.pinnedPolicies;
  const pinned =
    tenant.policiesByUri.get(requested) ?? buildFailClosedPolicy(requested, 'not published');
  return tenant.pinnedPolicies.length === 0 ? [pinned] : [...tenant.pinnedPolicies, pinned];
}

export function buildNplContext(
  tenant: CompiledTenant,
  agent: CompiledAgent,
  server: CompiledServer | undefined,
  request: InspectRequest,
  delegation: CallDelegation,
  usage?: NplContext['usage'],
): NplContext {
  const args = request.rpc.arguments;
  const context: NplContext = {
    tool: { name: request.toolName, args },
    args,
    agentRole: agent.role,
    agent: agent.nplAgent,
    server: server?.nplServer ?? { id: request.serverId },
    method: request.rpc.method,
    tenant: tenant.nplTenant,
    mode: request.mode,
    delegation,
  };
  // History is input (docs/limits.md): present only when the tenant's policies read it.
  return usage === undefined ? context : { ...context, usage };
}

/** A deny whose message is the registry's template for its code (shared/errors/codes.ts). */
function deny<Code extends ErrorCode>(
  code: Code,
  params: ErrorParams<Code>,
  signal?: DetectorSignal,
): PipelineOutcome {
  const message = formatErrorMessage(code, params);
  return signal ? { kind: 'deny', code, message, signal } : { kind: 'deny', code, message };
}

function denyByPolicy(
  code: 'NPL_POLICY_BLOCK' | 'NPL_REGISTRY_FAIL_CLOSED',
  decision: NplDecision,
): PipelineOutcome {
  const message = formatErrorMessage(code, { reason: decision.reason });
  return { kind: 'deny', code, message, decision };
}
