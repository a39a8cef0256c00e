// The mode vocabularies a gateway policy chooses from. Their own module so that the policy fields
// (gateway-policy-fields.ts) and the snapshot types (shared/snapshot/types.ts, which re-exports
// them) both import them without importing each other.

/** How a tool call is carried out: forwarded, answered with a mock, or decided without effect. */
export const EXECUTION_MODES = ['production', 'simulation', 'shadow'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

/** Whether the gateway is the OAuth authorization server for the tenant's MCP servers. */
export const OAUTH_MODES = ['none', 'mcp_as'] as const;
export type OAuthMode = (typeof OAUTH_MODES)[number];
