// tools/list through the proxy: the upstream's answer, with only the tools this agent may call.
// A tool stays when the agent's permitted tools include it, the gateway policy does not block it,
// and its definition is not held by pinning (shared/tools/tool-pins.ts): compared with the
// approved digest as listed right now, so a changed tool disappears from this very answer, before
// the database has recorded the change. The answer is recorded (data-plane/listed-tools.ts) after
// it is sent, which is what pins new tools and notices changes. Pagination, annotations, _meta
// and every field of a kept tool pass unchanged.

import { toolDefinitionDigest } from '../../shared/tools/tool-definitions.js';
import { pinVerdict } from '../../shared/tools/tool-pins.js';
import type { CompiledAgent, CompiledServer, CompiledTenant } from '../store/compiled-snapshot.js';

export function permittedTools(
  result: unknown,
  tenant: CompiledTenant,
  agent: CompiledAgent,
  server: CompiledServer,
): unknown {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  const tools = (result as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return result;
  const policy = tenant.policy;
  const kept = tools.filter((tool: unknown) => {
    if (typeof tool !== 'object' || tool === null) return false;
    const name = (tool as { name?: unknown }).name;
    if (typeof name !== 'string') return false;
    if (!agent.isToolAllowed(name) || policy.isToolBlocked(name)) return false;
    const pin = server.toolPins.get(name);
    const listed = pin ? toolDefinitionDigest(tool as Record<string, unknown>) : undefined;
    return pinVerdict(pin, policy.toolPinning, listed) === undefined;
  });
  return kept.length === tools.length ? result : { ...result, tools: kept };
}
