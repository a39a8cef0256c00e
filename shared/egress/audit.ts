// The audit entry of an egress refusal (`egress.refused`), one shape whoever refused: the
// control plane at registration, or a plane's connector about to connect. The entry names what
// was refused and why; the resolved address is recorded here for the operator, never returned to
// the caller.
import { AUDIT_ACTIONS, type JsonObject } from '../audit/index.js';
import type { EgressRefusal } from './check.js';

export type EgressRefusalStage = 'registration' | 'connect';

export function egressRefusalEntry(input: {
  readonly tenantId: string;
  readonly serverId: string;
  readonly refusal: EgressRefusal;
  readonly stage: EgressRefusalStage;
  /** Who asked: `actorType` and `actor` of an operator at registration; default the gateway. */
  readonly actor?: JsonObject;
  /** The URL refused at registration. */
  readonly url?: string;
}): {
  tenantId: string;
  action: typeof AUDIT_ACTIONS.EGRESS_REFUSED;
  resourceType: 'mcp_server';
  resourceId: string;
  metadata: JsonObject;
} {
  const { refusal } = input;
  return {
    tenantId: input.tenantId,
    action: AUDIT_ACTIONS.EGRESS_REFUSED,
    resourceType: 'mcp_server',
    resourceId: input.serverId,
    metadata: {
      ...(input.actor ?? { actorType: 'system' }),
      reasonCode: 'UPSTREAM_ADDRESS_FORBIDDEN',
      stage: input.stage,
      serverId: input.serverId,
      ...(input.url === undefined ? {} : { url: input.url }),
      host: refusal.host,
      address: refusal.address,
      rule: refusal.rule,
      message: refusal.detail,
    },
  };
}

/** The tenant and server of a pool's server key (`tenantId/serverId`, CompiledServer.serverKey). */
export function splitServerKey(serverKey: string): { tenantId: string; serverId: string } | null {
  const slash = serverKey.indexOf('/');
  if (slash <= 0 || slash === serverKey.length - 1) return null;
  return { tenantId: serverKey.slice(0, slash), serverId: serverKey.slice(slash + 1) };
}
