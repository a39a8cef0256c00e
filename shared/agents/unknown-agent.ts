// The refusal of an agent id that names no agent of the caller's tenant, wherever it was sent
// (a body's agent_id, a path, a GraphQL argument): 404 NOT_FOUND with the registry's agent hint
// (how to list agents and spawn one), not the unknown-route hint.
import { type GatewayError, gatewayError } from '../errors/index.js';

export function unknownAgent(
  agentId: string,
  details?: Readonly<Record<string, unknown>>,
): GatewayError<'NOT_FOUND'> {
  return gatewayError(
    'NOT_FOUND',
    { resource: `agent ${agentId} in this tenant` },
    { hintFor: 'agent', ...(details === undefined ? {} : { details }) },
  );
}
