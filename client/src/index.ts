// @agent-gateway/client: the core (fetch only, no Node-only API). Adapters, delegation and the
// resource-server verifier are subpath exports of their own, so importing the core pulls none of
// their dependencies.
export type { WaitForApprovalOptions } from './approvals.js';
export {
  type DelegationConfig,
  type Ed25519PrivateJwk,
  EXECUTION_MODES,
  type ExecutionMode,
  type GatewayClientConfig,
  type GatewayLogger,
} from './config.js';
export {
  createGatewayClient,
  denialOf,
  GatewayClient,
  type GovernedExecute,
  type GovernedTool,
  type GovernedToolDefinition,
  type InspectDecision,
  type InspectOutcome,
  type ToolCall,
} from './core.js';
export {
  AgentRevoked,
  ApprovalExpired,
  ApprovalRejected,
  ApprovalTimeout,
  type DenialDetails,
  type ErrorBodyDetails,
  type FieldIssue,
  GATEWAY_CLIENT_ERROR_CODES,
  type GatewayClientErrorCode,
  GatewayConfigError,
  GatewayDenied,
  GatewayError,
  GatewayRequestError,
  GatewayUnavailable,
} from './errors.js';
export type { AgentIdentityMaterial, AgentOAuthClient } from './identity.js';
export { createAgentProof, ed25519Multibase } from './proof.js';
export { REASON_CODES, type ReasonCode } from './reason-codes.js';
