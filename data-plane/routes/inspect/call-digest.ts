// The identity of a held call: SHA-256 over the canonical JSON of (tenant, agent, server, tool,
// arguments). Key order in the arguments does not matter; any other difference does, so an
// approval can only ever let through the call an operator saw.
import { contentHash } from '../../../shared/json/canonical-json.js';

export function callDigest(call: {
  readonly tenantId: string;
  readonly agentId: string;
  readonly serverId: string;
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
