// The identity of a held call: SHA-256 over the canonical JSON of (tenant, agent, server, tool,
// arguments). Key order in the arguments does not matter; any other difference does, so an
// approval can only ever let through the call an operator saw.
import type { AgentId, ServerId, TenantId } from '../../shared/ids.js';
import { contentHash } from '../../shared/json/canonical-json.js';

export function computeCallDigest(call: {
  readonly tenantId: TenantId;
  readonly agentId: AgentId;
  readonly serverId: ServerId;
  readonly toolName: string;
  readonly arguments: unknown;
}): string {
  return contentHash([
    call.tenantId,
    call.agentId,
    call.serverId,
    call.toolName,
    call.arguments ?? {},
  ]);
}
