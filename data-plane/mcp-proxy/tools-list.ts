// tools/list through the proxy: the upstream's answer, with only the tools this agent may call.
// A tool stays when the agent's permitted tools include it, the gateway policy does not block it,
// and its definition is not held by pinning (shared/tools/tool-pins.ts): compared with the
// approved digest as listed right now, so a changed tool disappears from this very answer, before
// the database has recorded the change. The answer is recorded (data-plane/listed-tools.ts) after
// it is sent, which is what pins new tools and notices changes. Pagination, annotations, _meta
// and every field of a kept tool pass unchanged.

import { toolDefinitionDigest } from '../../shared/tools/tool-definitions.js';
import { keepListedTools, pinVerdict } from '../../shared/tools/tool-pins.js';
import type { CompiledAgent, CompiledServer, CompiledTenant } from '../store/compiled-snapshot.js';

export function permittedTools(
  result: unknown,
  tenant: CompiledTenant,
  agent: CompiledAgent,
  server: CompiledServer,
): unknown {
  const policy = tenant.policy;
  return keepListedTools(result, (name, definition) => {
    if (!agent.isToolAllowed(name) || policy.isToolBlocked(name)) return false;
    const pin = server.toolPins.get(name);
    const listed = pin ? toolDefinitionDigest(definition) : undefined;
    return pinVerdict(pin, policy.toolPinning, listed) === undefined;
  });
}
