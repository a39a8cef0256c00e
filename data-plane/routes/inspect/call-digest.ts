// The identity of a held call: SHA-256 over the canonical JSON of (tenant, agent, server, tool,
// arguments). Key order in the arguments does not matter; any other difference does, so an
// approval can only ever let through the call an operator saw.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../shared/npl/index.js';

export function callDigest(call: {
  readonly tenantId: string;
  readonly agentId: string;
  readonly serverId: string;
  readonly toolName: string;
  readonly arguments: unknown;
}): string {
  const canonical = canonicalJson([
    call.tenantId,
    call.agentId,
    call.serverId,
    call.toolName,
    call.arguments ?? {},
  ]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
