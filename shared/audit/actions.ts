// Every action the gateway writes to a tenant's audit trail, in one place: the writers name their
// action from here, so a reader (the auditTrail query's `action` filter, an export consumer, the
// table in docs/audit.md) has one list to go by, and a misspelt action is a compile error instead
// of an entry no filter finds. The strings are part of the hashed entry and of exports already
// written: a value never changes, a new action gets a new name.

export const AUDIT_ACTIONS = {
  /** The data plane blocked a tool call (any reason code, malformed requests included). */
  INSPECT_DENY: 'inspect.deny',
  /** Shadow mode: the call would have been blocked or held; it was forwarded anyway. */
  INSPECT_SHADOW_BLOCK: 'inspect.shadow_block',
  /** An NPL rule held a call for a human; the approval was created. */
  APPROVAL_REQUESTED: 'approval.requested',
  /** The agent resubmitted the held call with its approved approval, which let it through once. */
  APPROVAL_USED: 'approval.used',
  /** An operator approved a held call. */
  APPROVAL_APPROVED: 'approval.approved',
  /** An operator rejected a held call. */
  APPROVAL_REJECTED: 'approval.rejected',
  /** A tenant was created (by the first start, or by an operator). */
  TENANT_CREATED: 'tenant.created',
  /** An API key was created (the first start's admin key, or by an operator). */
  API_KEY_CREATED: 'api_key.created',
  /** An operator revoked an API key. */
  API_KEY_REVOKED: 'api_key.revoked',
  /** An operator changed the tenant's gateway policy. */
  GATEWAY_POLICY_UPDATED: 'gateway_policy.updated',
  /** An operator registered an MCP server (or registered it again with new settings). */
  MCP_SERVER_REGISTERED: 'mcp_server.registered',
  /** An operator changed a registered MCP server. */
  MCP_SERVER_UPDATED: 'mcp_server.updated',
  /** An operator removed a registered MCP server. */
  MCP_SERVER_REMOVED: 'mcp_server.removed',
  /** An operator created an agent. */
  AGENT_CREATED: 'agent.created',
  /** An operator changed an agent's role, allowed tools or persona. */
  AGENT_UPDATED: 'agent.updated',
  /** An operator published an NPL policy version. */
  NPL_POLICY_PUBLISHED: 'npl_policy.published',
  /**
   * An operator pinned a policy version: it is evaluated on every inspect of the tenant. Pinned in
   * place of another version, `metadata.replaced` names that one (unpinned by the same change).
   */
  NPL_POLICY_PINNED: 'npl_policy.pinned',
  /** An operator unpinned a policy version. */
  NPL_POLICY_UNPINNED: 'npl_policy.unpinned',
  /** The tenant's first AgentIAM CA key was created (on the first issuance that needed it). */
  SIGNING_KEY_CREATED: 'signing_key.created',
  /** An operator rotated the tenant's AgentIAM CA key; live credentials were re-issued. */
  SIGNING_KEY_ROTATED: 'signing_key.rotated',
  /** An identity credential was issued to an agent (GraphQL or the REST issue endpoint). */
  CREDENTIAL_ISSUED: 'credential.issued',
  /** An operator revoked an identity credential: its status-list bit is set. */
  CREDENTIAL_REVOKED: 'credential.revoked',
  /** An operator registered an OAuth client for an agent (POST /oauth/register, GraphQL). */
  OAUTH_CLIENT_REGISTERED: 'oauth.client_registered',
  /** An operator revoked an OAuth client: it authenticates no more, its tokens are refused. */
  OAUTH_CLIENT_REVOKED: 'oauth.client_revoked',
  /** A client or operator revoked an access token (RFC 7009). */
  OAUTH_TOKEN_REVOKED: 'oauth.token_revoked',
  /** An operator spawned a governed agent: key, identity credential and OAuth client together. */
  AGENT_SPAWNED: 'agent.spawned',
  /**
   * The kill switch stopped an agent: what was revoked, rejected and aborted, and which data
   * planes confirmed (docs/kill-switch.md). Once per agent.
   */
  AGENT_KILLED: 'agent.killed',
  /**
   * The ids of a kill that did not fit in its `agent.killed` entry (at most 1 000 of each kind
   * per entry): the next 1 000s, referencing the kill's entry.
   */
  AGENT_KILLED_CONTINUED: 'agent.killed_continued',
  /**
   * An authentication, authorization or transport refusal of a known tenant's key, client or
   * agent: the first of its subject and reason code in a minute (docs/audit.md, "Refusals").
   */
  AUTH_REFUSED: 'auth.refused',
  /** The count of the refusals of one subject and reason code after the first, in one minute. */
  AUTH_REFUSED_SUMMARY: 'auth.refused_summary',
  /**
   * An upstream sent a tool definition that differs from the pinned one: the tool is held
   * (hidden from the MCP proxy's tools/list, its calls denied) until approved.
   */
  TOOL_DEFINITION_CHANGED: 'tool_definition.changed',
  /** An operator approved a tool definition: it is the pinned one from now on. */
  TOOL_DEFINITION_APPROVED: 'tool_definition.approved',
  /**
   * The egress policy refused an upstream's address (UPSTREAM_ADDRESS_FORBIDDEN): at registration
   * or change of an MCP server, or when a forward, a proxy session or a tools/list refresh was
   * about to connect. Nothing was sent.
   */
  EGRESS_REFUSED: 'egress.refused',
} as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[keyof typeof AUDIT_ACTIONS];
