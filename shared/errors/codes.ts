// The registry of stable error and reason codes: every code the gateway emits, with the HTTP
// status it maps to (null for codes that never reach HTTP, such as storage failures reported by
// the CLI), its one message template, and a hint for the operator. The spec's reasonCodes are
// part of it. Errors are built from this table only (gatewayError), so a code has one wording
// and one status everywhere. docs/errors.md and the client's list of codes
// (client/src/reason-codes.ts, `npm run client:codes`) are generated from it, and tests keep
// them in step.

/** What every code table of the gateway says about a code (see also shared/audit/codes.ts). */
export interface CodeInfo {
  /** HTTP status when the code is an HTTP answer; null when it is only reported by the CLI. */
  readonly status: number | null;
  /** One sentence: what the code means. */
  readonly summary: string;
  /** One sentence: what to do about it. */
  readonly hint: string;
}

export interface ErrorCodeInfo extends CodeInfo {
  /** The message, with `{name}` placeholders the builder fills in (shared/errors/template.ts). */
  readonly message: string;
  /**
   * Hints for a particular subject, which the call site names (`hintFor`) when it knows better
   * than the general hint what was meant: an unknown agent id in a body is not an unknown route.
   */
  readonly hints?: Readonly<Record<string, string>>;
}

export const ERROR_CODES = {
  // Inspection pipeline (spec §7, DESIGN.md §4).
  MCP_MALFORMED_RPC: {
    status: 400,
    message: '{problem}',
    summary: 'The request is not a valid JSON-RPC 2.0 message.',
    hint: 'The message names the wrong field and what it must be; send the inspect body of docs/inspect.md as a JSON object.',
  },
  MCP_SERVER_NOT_WHITELISTED: {
    status: 403,
    message: 'server {serverId} is not whitelisted',
    summary: "The target server is not on the tenant's trusted whitelist.",
    hint: "Add the server id to the gateway policy's trusted servers (updateGatewayPolicy mutation).",
  },
  MCP_METHOD_BLOCKED: {
    status: 403,
    message: '{kind} {name} is blocked',
    summary: 'The method or tool is blocked by the gateway policy.',
    hint: "Review the gateway policy's blocked methods and tools.",
  },
  MCP_DESTRUCTIVE_OP_BLOCKED: {
    status: 403,
    message: 'destructive operation: {signal}',
    summary: 'The operation is destructive and the gateway policy denies destructive operations.',
    hint: 'The answer names the signal that fired; ask an operator if the call is intended.',
  },
  MCP_TOKEN_PASSTHROUGH: {
    status: 400,
    message: 'a bearer token for the MCP server was presented ({location})',
    summary: 'The client presented a bearer token meant for the MCP server.',
    hint: "Remove the MCP server's token from the request: agents authenticate to the gateway with their API key only.",
  },
  MCP_META_TOO_LARGE: {
    status: 400,
    message:
      '{location} nests deeper than {maxDepth} levels or holds more than {maxNodes} values: too much to check for tokens',
    summary:
      'The `_meta` of the message is too deep or too large to be checked for passed-through tokens, so it is refused (fail closed).',
    hint: 'Keep `_meta` small and shallow (docs/security.md, "Tokens nested in _meta"); credentials for the MCP server never belong in it.',
  },
  MCP_DATA_EXFILTRATION_SUSPECTED: {
    status: 403,
    message: 'possible exfiltration: {signal}',
    summary:
      'The arguments look like data leaving the tenant (secret, bulk export, foreign destination).',
    hint: 'The answer names the heuristic that fired; adjust the gateway policy if the call is legitimate.',
  },
  NPL_POLICY_BLOCK: {
    status: 403,
    message: '{reason}',
    summary: 'An NPL policy rule with action BLOCK matched the call.',
    hint: 'The answer names the policy and rule; change the call or the policy.',
  },
  NPL_REGISTRY_FAIL_CLOSED: {
    status: 403,
    message: '{reason}',
    summary: 'A pinned NPL policy cannot be resolved, so the call is blocked (fail closed).',
    hint: 'Publish the pinned svc://name@version (publishNplPolicy mutation) or fix the pin (pinNplPolicy, unpinNplPolicy).',
  },
  NPL_REQUIRE_HUMAN: {
    status: 202,
    message: '{reason}',
    summary:
      'An NPL policy requires a human to approve the call; it is held in the approval queue.',
    hint: 'Wait for the approval (GET …/approvals/{id}?wait=30), then resubmit with approval_id.',
  },
  RATE_LIMIT_EXCEEDED: {
    status: 429,
    message:
      'limit {limitId}: {used} of {max} calls used in the {windowSeconds} s window; it resets at {resetsAt}',
    summary:
      'The call would take a call-count limit of the gateway policy past its maximum in the current window (docs/limits.md).',
    hint: 'Retry after the Retry-After header (the `limit` object says when the window resets), or ask an operator to raise the limit (GatewayPolicy.limits).',
  },
  BUDGET_EXCEEDED: {
    status: 429,
    message:
      'budget {limitId}: {used} of {max} used in the {windowSeconds} s window and this call adds {requested}; it resets at {resetsAt}',
    summary:
      "The call's amount would take a budget of the gateway policy past its maximum sum in the current window (docs/limits.md).",
    hint: 'Retry with a smaller amount or after the Retry-After header (the `limit` object says when the window resets), or ask an operator to raise the budget (GatewayPolicy.limits).',
  },
  BUDGET_ARGUMENT_INVALID: {
    status: 400,
    message: 'budget {limitId} sums {sumArgument}, which {problem}',
    summary:
      'A budget of the gateway policy applies to the call, and the argument it sums is missing, not a JSON number, or negative: the call is refused (fail closed) and counted nowhere.',
    hint: 'Send the argument the message names as a JSON number of at least 0 (a numeric string is not one); docs/limits.md#budgets.',
  },
  LIMIT_REQUIRE_HUMAN: {
    status: 202,
    message: '{what} {limitId}: {used} of {max} used in the window; this call needs a human',
    summary:
      'The call would exceed a usage limit whose action is REQUIRE_HUMAN: it is held in the approval queue; an approved call passes and counts (docs/limits.md).',
    hint: 'Wait for the approval (GET …/approvals/{id}?wait=30), then resubmit with approval_id.',
  },
  LIMIT_COUNTER_UNAVAILABLE: {
    status: 503,
    message: 'limit {limitId} cannot be counted: {detail}',
    summary:
      "The call is under a usage limit and the gateway cannot count it on its database (budgets always need it; call counts past the data plane's local allowance): refused, fail closed.",
    hint: "Check the data plane's database (its /readyz and logs); calls under no limit are not affected. docs/limits.md#faults.",
  },
  AGENT_UNKNOWN: {
    status: 403,
    message: 'unknown agent {agentId}',
    summary: "The agent does not exist in the API key's tenant.",
    hint: "Use the id of an agent of the API key's tenant: the agents GraphQL query and the console's Agents screen (/console/agents) list them; POST /api/v1/agents/spawn (docs/spawn.md) makes one.",
  },
  AGENT_REVOKED: {
    status: 403,
    message: 'agent {agentId} is revoked',
    summary: 'The agent has been killed; its calls are refused everywhere.',
    hint: 'Create a new agent with the createAgent mutation if the work must continue.',
  },
  AGENT_NOT_FOUND: {
    status: 404,
    message: 'no agent with public key {publicKey} in this tenant',
    summary:
      "The kill switch's path names no agent of the caller's tenant. A lookup by path answers 404 (the resource is absent), whereas inspect's pipeline step answers AGENT_UNKNOWN 403 (a decision about a call, audited as a deny).",
    hint: "Use the agent's publicKey in the z6Mk… form (the agents query or the spawn answer shows it), with an API key of the agent's tenant.",
  },
  KILL_STATE_UNCONFIRMED: {
    status: 503,
    message:
      'this data plane cannot confirm which agents are killed: its configuration stream is stale and the kill table cannot be read',
    summary:
      'A data plane that has lost the configuration stream for three heartbeats and cannot read the kill table refuses requests rather than serve an agent that may be killed.',
    hint: 'Check that the data plane reaches PostgreSQL (DATABASE_URL) and the control plane (--control-plane); it serves again as soon as either answers.',
  },
  DATA_PLANE_REVOKED: {
    status: 503,
    message: 'this data plane was revoked: the control plane refuses its credential',
    summary:
      'A data plane whose credential the control plane refused (`agent-gateway data-plane revoke`, or a credential it does not know) is no longer part of the fleet: it decides nothing and answers /readyz 503.',
    hint: 'Send the request to another data plane. To bring this one back, register it again (`agent-gateway data-plane register`) and restart it with the new credential, or check that --control-plane names the right control plane.',
  },
  DATA_PLANE_NOT_READY: {
    status: 503,
    message: 'this data plane is starting: it has not received the current configuration yet',
    summary:
      'A data plane that has just started decides nothing until the control plane has sent it the current configuration (or, when the control plane cannot be reached within AGENT_GATEWAY_STARTUP_SNAPSHOT_WAIT_MS, it falls back to its persisted snapshot).',
    hint: 'Retry in a few seconds, or send the request to a data plane whose /readyz answers 200.',
  },
  AGENT_TOOLS_EXCEED_PARENT: {
    status: 400,
    message: 'allowed_tools names tools the parent agent {parentAgentId} may not use: {tools}',
    summary: "A sub-agent's allowed tools must be a subset of its parent's (spec §2.3).",
    hint: "Remove the named tools from allowed_tools, or add them to the parent's allowed tools first (updateAgent).",
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    message: 'Idempotency-Key {key} was used with another request body',
    summary:
      'The Idempotency-Key was already used by this API key within 24 hours for a different request.',
    hint: 'Send the exact body of the first request to get its answer again, or use a new Idempotency-Key for a new spawn.',
  },
  AGENT_TOOL_NOT_ALLOWED: {
    status: 403,
    message: 'agent may not use tool {toolName}',
    summary: "The tool is not among the agent's allowed tools.",
    hint: "Add the tool to the agent's allowed tools (updateAgent mutation), or use an agent that has it.",
  },
  EXECUTION_MODE_NOT_ALLOWED: {
    status: 403,
    message: 'mode {mode} is not allowed',
    summary: "The execution mode is not among the tenant's allowed modes.",
    hint: "Use one of the gateway policy's allowed modes, or change the policy.",
  },
  MCP_SERVER_NOT_REGISTERED: {
    status: 404,
    message: 'server {serverId} is {registration}',
    summary: 'The tenant has not registered this server, so the call cannot be forwarded.',
    hint: 'Register the server with the registerMcpServer mutation (URL and transport), or use simulation mode.',
  },
  MCP_OAUTH_UNAVAILABLE: {
    status: 503,
    message: 'the tenant requires gateway-minted access tokens and no token issuer is configured',
    summary: 'The tenant requires gateway-minted access tokens and no token issuer is configured.',
    hint: 'This build has no token issuer: set oauthMode to none with the updateGatewayPolicy mutation and leave NEXUS_REQUIRE_MCP_OAUTH unset.',
  },
  MCP_UPSTREAM_ERROR: {
    status: 502,
    message: 'upstream failed: {detail}',
    summary: 'The upstream MCP server failed or answered with something that is not JSON-RPC.',
    hint: 'Check the upstream server; the answer carries a short detail.',
  },
  MCP_UPSTREAM_TIMEOUT: {
    status: 504,
    message: 'upstream timed out: {detail}',
    summary: 'The upstream MCP server did not answer in time.',
    hint: 'Check the upstream server or raise its timeout.',
  },
  MCP_UPSTREAM_ABORTED: {
    status: 409,
    message: 'forward aborted: {detail}',
    summary: 'The forward was aborted because the agent was killed while it ran.',
    hint: 'The agent is revoked; nothing more will be forwarded for it.',
  },
  // Egress policy (DESIGN.md §12, docs/security.md "Egress").
  UPSTREAM_ADDRESS_FORBIDDEN: {
    status: 502,
    message: 'upstream address forbidden: {detail}',
    summary:
      "The egress policy forbids the upstream's address (the URL's literal address, or one its host name resolves to); nothing was sent to it.",
    hint: 'Register the server at an allowed address, or have the operator change AGENT_GATEWAY_EGRESS_ALLOW / AGENT_GATEWAY_EGRESS_DENY (docs/security.md, Egress).',
  },
  // Tool-definition pinning (docs/tool-pinning.md).
  MCP_TOOL_DEFINITION_CHANGED: {
    status: 403,
    message: 'tool {tool} of server {serverId} changed its definition since it was approved',
    summary:
      'The upstream now describes this tool differently from the definition an operator approved (or the gateway first saw): it is hidden and denied until reviewed.',
    hint: 'Review the change with the toolDefinitionChanges query and approve it with approveToolDefinition (docs/tool-pinning.md).',
  },
  MCP_TOOL_NOT_APPROVED: {
    status: 403,
    message: 'tool {tool} of server {serverId} has not been approved by an operator',
    summary:
      'The tenant pins tool definitions in approved_only mode and nobody has approved this tool yet.',
    hint: 'Approve its definition with approveToolDefinition (toolDefinitionChanges lists it), or set toolPinning to first_sight.',
  },
  // MCP proxy transport (docs/mcp-proxy.md).
  MCP_ORIGIN_FORBIDDEN: {
    status: 403,
    message: 'Origin {origin} may not use the MCP proxy',
    summary:
      'The request came from a web page of another origin; the proxy refuses it so a page cannot drive it through DNS rebinding.',
    hint: "Call the proxy from an MCP client (no Origin header), from the gateway's own origin, or from a local origin (localhost, 127.0.0.1, [::1]).",
  },
  MCP_SESSION_NOT_FOUND: {
    status: 404,
    message: 'MCP session {sessionId} does not exist or has ended',
    summary: 'The Mcp-Session-Id names no live session of this proxy endpoint.',
    hint: 'Start a new session with an initialize request (MCP clients do this by themselves on 404).',
  },
  MCP_SESSION_REQUIRED: {
    status: 400,
    message: 'this request needs an Mcp-Session-Id header: {problem}',
    summary: 'Every request but initialize belongs to a session the proxy opened.',
    hint: 'Send initialize first and repeat the Mcp-Session-Id header of its answer on every later request.',
  },
  MCP_SESSION_FORBIDDEN: {
    status: 403,
    message: 'MCP session {sessionId} belongs to another agent',
    summary: 'A session is bound to the agent that opened it.',
    hint: 'Use the session with the credentials that opened it, or open a new session.',
  },
  MCP_PROTOCOL_VERSION_UNSUPPORTED: {
    status: 400,
    message: 'MCP-Protocol-Version {version} is not supported',
    summary:
      'The request names a protocol revision the proxy does not speak, of an era the upstream does not speak, or of the stateless era on a session (a stateless answer carries data.supported, JSON-RPC -32022).',
    hint: 'Use one of the revisions data.supported or docs/mcp-proxy.md lists (on a session: the one initialize negotiated).',
  },
  MCP_HEADER_MISMATCH: {
    status: 400,
    message: 'the request headers do not match its body: {problem}',
    summary:
      'MCP 2026-07-28 mirrors the protocol version, method and name of a request into MCP-Protocol-Version, Mcp-Method and Mcp-Name; they must be present and equal to the body (JSON-RPC -32020, HeaderMismatch).',
    hint: 'Send MCP-Protocol-Version, Mcp-Method and (tools/call, prompts/get, resources/read) Mcp-Name equal to the body, Base64 sentinel-encoded where not plain ASCII (docs/mcp-proxy.md).',
  },
  MCP_META_INVALID: {
    status: 400,
    message: 'the request metadata is invalid: {problem}',
    summary:
      'A stateless MCP request (2026-07-28) carries its protocol version and client capabilities in params._meta (JSON-RPC -32602, Invalid params).',
    hint: 'Put io.modelcontextprotocol/protocolVersion (a string) and io.modelcontextprotocol/clientCapabilities (an object) in params._meta of every request (docs/mcp-proxy.md).',
  },
  MCP_REQUEST_STATE_INVALID: {
    status: 403,
    message: 'the requestState is not one the gateway issued for this call: {problem}',
    summary:
      "A 2026-07-28 client's retry of tools/call carried a requestState the gateway cannot verify, that has expired, or that it issued to another agent, server or call; nothing was forwarded and the refusal is audited.",
    hint: "Send tools/call again without requestState (or with the one from the gateway's last InputRequiredResult for the same tool and arguments); every data plane needs the same AGENT_GATEWAY_MASTER_KEY (docs/mcp-proxy.md).",
  },
  MCP_PROXY_UNAUTHORIZED: {
    status: 401,
    message: 'the MCP proxy needs a bearer token for {resource}: {problem}',
    summary:
      'The proxy accepts an access token of this gateway whose audience is the proxy resource, or an agents:execute API key with an X-Agent-Id header.',
    hint: "Follow the WWW-Authenticate resource_metadata link: obtain a token at the gateway's token endpoint with resource=<the proxy URL> (docs/mcp-proxy.md).",
  },
  MCP_CONCURRENCY_LIMIT: {
    status: 429,
    message: 'too many calls in flight for this {scope} (limit {limit})',
    summary: 'The session or the agent already has as many calls in flight as the proxy allows.',
    hint: 'Wait for a call to finish, or raise AGENT_GATEWAY_MCP_SESSION_CONCURRENCY / AGENT_GATEWAY_MCP_AGENT_CONCURRENCY.',
  },
  // Approvals (DESIGN.md §4).
  APPROVAL_PENDING: {
    status: 403,
    message: 'approval {approvalId} is still pending',
    summary: 'The approval has not been decided yet.',
    hint: 'Long-poll GET /api/v1/mcp/gateway/approvals/{id}?wait=30 until an operator decides (approveApproval or rejectApproval mutation), then resubmit.',
  },
  APPROVAL_REJECTED: {
    status: 403,
    message: 'approval {approvalId} was rejected',
    summary: 'An operator rejected the held call.',
    hint: 'Do not retry the same call; the rejection is in the audit trail.',
  },
  APPROVAL_EXPIRED: {
    status: 403,
    message: 'approval {approvalId} has expired',
    summary: 'The approval expired before it was used.',
    hint: 'Submit the call again to request a new approval.',
  },
  APPROVAL_MISMATCH: {
    status: 403,
    message: 'approval {approvalId} was granted for a different call',
    summary: 'The resubmitted call differs from the one that was approved.',
    hint: 'Resubmit exactly the approved call (same agent, server, tool and arguments).',
  },
  APPROVAL_ALREADY_USED: {
    status: 403,
    message: 'approval {approvalId} has already been used',
    summary: 'The approval has already let its call through once.',
    hint: 'An approval passes one call; request a new one.',
  },
  APPROVAL_NOT_FOUND: {
    status: 404,
    message: 'approval {approvalId} not found',
    summary: 'No approval with this id exists in the tenant.',
    hint: 'Use the approval.id from the 202 answer, with an API key of the same tenant.',
  },
  // Authentication (spec §5, DESIGN.md §4).
  AUTH_INVALID_API_KEY: {
    status: 401,
    message: '{problem}',
    summary:
      'The Authorization header is missing, or the API key it carries is malformed, unknown, revoked or expired.',
    hint: 'Send the header "Authorization: Bearer <API key>" with a valid key of your tenant: the first start prints an administrator key, createApiKey makes others (docs/security.md).',
  },
  AUTH_INSUFFICIENT_SCOPE: {
    status: 403,
    message: 'this operation needs scope {scope}',
    summary: 'The API key lacks the scope this operation needs.',
    hint: 'Use a key with the scope named in the message.',
  },
  // API keys (docs/security.md, "Administrator lockout and break-glass").
  API_KEY_LAST_ADMIN: {
    status: 409,
    message:
      'API key {keyId} is the last active key holding tenants:admin: revoking it would leave the gateway without an administrator',
    summary:
      'The key is the only unrevoked, unexpired key of the gateway holding tenants:admin, so it cannot be revoked.',
    hint: 'Create another key with tenants:admin first (createApiKey), then revoke this one; an operator locked out already mints one on the gateway host with `agent-gateway admin-key reset --tenant <name>`.',
  },
  // Pins of NPL policy versions (docs/npl.md, "Pinning").
  NPL_PIN_REPLACES_NOT_PINNED: {
    status: 409,
    message: '{replaces} is not pinned, so {uri} cannot replace it (pinned: {pinned})',
    summary:
      'pinNplPolicy was asked to pin a version in place of one that is not pinned (any more); nothing changed.',
    hint: 'Name one of the pinned versions in `replaces` (gatewayPolicy.pinnedPolicies), or leave `replaces` out to pin beside them (docs/npl.md, "Pinning").',
  },
  NPL_PIN_ALREADY_PINNED: {
    status: 409,
    message: '{uri} is already pinned, so it cannot replace {replaces}',
    summary:
      'pinNplPolicy was asked to pin a version in place of another while that version is pinned already; nothing changed.',
    hint: 'Unpin the other version with unpinNplPolicy instead (docs/npl.md, "Pinning").',
  },
  TENANT_UNKNOWN: {
    status: null,
    message: 'no tenant has the name or id {tenant} (tenants: {known})',
    summary: 'A command named a tenant that does not exist in this database.',
    hint: 'Pass one of the listed names with --tenant; check that the command reads the same database as the gateway (DATABASE_URL, AGENT_GATEWAY_DB_SCHEMA, AGENT_GATEWAY_DATA_DIR or --data-dir).',
  },
  // Requests in general.
  REQUEST_INVALID: {
    status: 400,
    message: '{problem}',
    summary:
      'The request body or parameters are invalid; `issues` lists every problem, one `{ field, message }` each.',
    hint: 'Fix every field `issues` lists (each says what it must be); the page in `docs` describes the request.',
  },
  REQUEST_TOO_LARGE: {
    status: 413,
    message: 'the body of {route} is larger than its limit of {limitBytes} bytes ({limitSize})',
    summary: "The request body exceeds the route's size limit.",
    hint: 'Send a body within the limit the message gives (also in `limitBytes`); split a batch into several requests.',
  },
  REQUEST_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'request body must be JSON',
    summary: 'The request body is not JSON.',
    hint: 'Send Content-Type: application/json.',
  },
  RATE_LIMITED: {
    status: 429,
    message: 'at most {max} requests per {window} per client; retry in {retryAfter}',
    summary: 'Too many requests from this client.',
    hint: 'Retry after the number of seconds in the Retry-After header.',
  },
  COMPLIANCE_BATCH_LIMIT_EXCEEDED: {
    status: 413,
    message: '{subject}: {actual} exceeds the limit of {max} ({limit})',
    summary:
      'The compliance batch exceeds a limit (items, tool calls, policy size or evaluation work).',
    hint: 'Split the batch; the answer names the limit, its maximum and the value sent.',
  },
  CONSOLE_NOT_BUILT: {
    status: 503,
    message: 'the operator console is not built (no {file})',
    summary:
      'The gateway serves the console from web-console/dist, which `npm install` and `npm run build` create; this installation has none.',
    hint: 'Run `npm run build:console` in the gateway folder (or `npm install`, which builds it), then reload /console.',
  },
  NOT_FOUND: {
    status: 404,
    message: 'no {resource}',
    summary:
      "No such route, or no such resource in the caller's tenant (other tenants' rows look absent).",
    hint: "Check the method and path against schema/openapi.json, or use an id this API returned for your API key's tenant.",
    hints: {
      agent:
        "The agent id names no agent of your API key's tenant: the agents GraphQL query and the console's Agents screen (/console/agents) list them; POST /api/v1/agents/spawn (docs/spawn.md) makes one.",
    },
  },
  INTERNAL_ERROR: {
    status: 500,
    message: 'unexpected error',
    summary: 'An unexpected error inside the gateway.',
    hint: 'Retry; if it persists, report it with the request id from the logs.',
  },
  // Process start-up and configuration (reported by the CLI; never an HTTP answer).
  CONFIG_INVALID: {
    status: null,
    message: '{setting} is invalid: {problem}',
    summary: 'An environment variable or option has an invalid value.',
    hint: 'Fix the value named in the message; README.md lists every setting.',
  },
  SERVER_PORT_IN_USE: {
    status: null,
    message: '{address} is already in use',
    summary: 'The address the gateway should listen on is already in use.',
    hint: 'Stop the other process or choose another port with AGENT_GATEWAY_PORT.',
  },
  SERVER_LISTEN_FAILED: {
    status: null,
    message: 'cannot listen on {address}: {reason}',
    summary: 'The gateway cannot listen on the configured address.',
    hint: 'Check AGENT_GATEWAY_HOST and AGENT_GATEWAY_PORT.',
  },
  // Configuration push between the planes (docs/config-push.md).
  DATA_PLANE_CREDENTIAL_INVALID: {
    status: 401,
    message: 'invalid data-plane credential',
    summary: 'The data-plane credential is missing, malformed, unknown or revoked.',
    hint: 'Send "Authorization: Bearer agdp_…" as printed by `agent-gateway data-plane register`.',
  },
  DATA_PLANE_NAME_TAKEN: {
    status: null,
    message: 'a data plane named {name} exists already',
    summary: 'A data plane with this name is already registered.',
    hint: 'Choose another --name; each data plane has its own name and credential.',
  },
  DATA_PLANE_REQUIRES_POSTGRES: {
    status: null,
    message:
      'separate control-plane and data-plane processes need PostgreSQL (DATABASE_URL is not set)',
    summary: 'Separate control-plane and data-plane processes need a shared PostgreSQL database.',
    hint: 'Set DATABASE_URL for both processes (docs/deployment.md), or run both planes in one with `agent-gateway start`.',
  },
  CONTROL_PLANE_REQUIRES_POSTGRES: {
    status: null,
    message:
      '`agent-gateway control-plane` needs PostgreSQL: DATABASE_URL is not set, and the data planes must share its database',
    summary:
      'The control plane of a split deployment was started without DATABASE_URL: its data planes write to its database, which the embedded one cannot share.',
    hint: 'Set DATABASE_URL to the PostgreSQL database the control plane and its data planes share (docs/deployment.md), or run both planes in one process on the embedded database with `agent-gateway start`.',
  },
  PUBLIC_URL_REQUIRED: {
    status: null,
    message:
      'AGENT_GATEWAY_PUBLIC_URL is not set: `agent-gateway {command}` needs the public URL every process of a split deployment shares',
    summary:
      'A control plane or data plane of a split deployment was started without AGENT_GATEWAY_PUBLIC_URL.',
    hint: 'Set AGENT_GATEWAY_PUBLIC_URL to the URL agents reach the gateway at (the reverse proxy in front of every process), the same value on every process; docs/deployment.md.',
  },
  DATA_PLANE_PUBLIC_URL_MISMATCH: {
    status: null,
    message:
      'this data plane has AGENT_GATEWAY_PUBLIC_URL={local} but the control plane has {controlPlane}: it stops rather than mint and accept tokens for another URL',
    summary:
      'A data plane and its control plane disagree on the public URL (issuer, token audience, proof htu).',
    hint: 'Set AGENT_GATEWAY_PUBLIC_URL to the same value on every process of the deployment, then start the data plane again.',
  },
  DATA_PLANE_NAME_MISMATCH: {
    status: null,
    message: '--name {given} does not match this credential: it belongs to data plane {registered}',
    summary:
      'A data plane was started with a --name other than the one its credential was registered with.',
    hint: "Pass the name given to `agent-gateway data-plane register` (or leave --name out), or use that data plane's credential file.",
  },
  // Storage (reported by the CLI; never an HTTP answer).
  STORAGE_CONFIG_INVALID: {
    status: null,
    message: 'invalid PostgreSQL schema name {schema}',
    summary: 'The storage configuration is invalid.',
    hint: 'Check DATABASE_URL and AGENT_GATEWAY_DATA_DIR.',
  },
  STORAGE_UNREACHABLE: {
    status: null,
    message: 'cannot connect to PostgreSQL at {location}: {reason}',
    summary: 'The PostgreSQL server cannot be reached.',
    hint: 'Check that the server runs and that DATABASE_URL names the right host, port, user and database.',
  },
  STORAGE_DATA_DIR_UNWRITABLE: {
    status: null,
    message: 'cannot write {what} {path}: {reason}',
    summary: 'The data directory cannot be created or written.',
    hint: 'Choose a writable directory with AGENT_GATEWAY_DATA_DIR or fix its permissions.',
  },
  STORAGE_DATA_DIR_CORRUPT: {
    status: null,
    message: 'cannot open the embedded database in {dataDir}: {reason}',
    summary: 'The embedded database in the data directory cannot be opened.',
    hint: 'Restore the data directory from a backup, or move it aside to start afresh.',
  },
  STORAGE_EMBEDDED_STOPPED: {
    status: null,
    message: 'the embedded database ({dataDir}) stopped: {reason}',
    summary: 'The thread running the embedded database ended unexpectedly.',
    hint: 'Restart the gateway; committed data is kept. If it happens again, report the reason and run the gateway on PostgreSQL (DATABASE_URL) meanwhile.',
  },
  STORAGE_DATA_DIR_IN_USE: {
    status: null,
    message: 'data directory {dataDir} is in use by {holder}',
    summary: 'Another running process holds the embedded database.',
    hint: 'Stop that process, talk to it over HTTP, or run the gateways on PostgreSQL (DATABASE_URL): the embedded database allows one process.',
  },
  STORAGE_MIGRATION_FAILED: {
    status: null,
    message: 'migrating {target} failed: {reason}',
    summary: 'A database migration failed; nothing of it was applied.',
    hint: 'Read the database error above; fix the database or the migration and start again.',
  },
  STORAGE_MIGRATION_DRIFT: {
    status: null,
    message:
      'migration {migration} was changed after it was applied (checksum {appliedChecksum} in the database, {fileChecksum} on disk)',
    summary: 'An applied migration differs from the file of the same name.',
    hint: 'Migrations are immutable once applied: restore the original file, add a new migration.',
  },
  STORAGE_SCHEMA_AHEAD: {
    status: null,
    message: 'the database has migrations this gateway does not know: {migrations}',
    summary: 'The database has migrations this version of the gateway does not know.',
    hint: 'Run a gateway version at least as new as the one that migrated this database.',
  },
  STORAGE_NOT_MIGRATED: {
    status: null,
    message: 'the database at {location} lacks {missing}',
    summary: 'The database lacks migrations this command needs; read-only commands never migrate.',
    hint: 'Run `agent-gateway migrate` (or start the gateway once) against this database.',
  },
  STORAGE_DATA_DIR_MISSING: {
    status: null,
    message: '{dataDir} holds no gateway database (no pgdata directory)',
    summary: 'The data directory holds no embedded database.',
    hint: 'Point AGENT_GATEWAY_DATA_DIR or --data-dir at the gateway data directory, or set DATABASE_URL.',
  },
  // Audit checkpoints and proofs (docs/audit.md, "Checkpoints").
  AUDIT_CHECKPOINT_NOT_FOUND: {
    status: 404,
    message: 'this tenant has no signed audit checkpoint yet',
    summary:
      "The tenant's audit trail has no signed checkpoint yet: none was cut since the gateway learnt to cut them.",
    hint: 'POST /api/v1/audit/checkpoint (scope audit:read) cuts one now; the gateway also cuts one within AGENT_GATEWAY_AUDIT_CHECKPOINT_SECONDS of the next entry.',
  },
  AUDIT_CHECKPOINT_UNAVAILABLE: {
    status: 503,
    message: 'audit checkpoints cannot be signed here: {reason}',
    summary:
      'This process cannot sign audit checkpoints: it has no master key to open the audit signing key, or it is a data plane (only the control plane signs).',
    hint: 'Ask the control plane (or the `start` process) that holds AGENT_GATEWAY_MASTER_KEY; its start-up log says whether the master key was opened.',
  },
  AUDIT_PROOF_SIZE_INVALID: {
    status: 400,
    message: '{problem}',
    summary:
      "A proof was asked for a tree size that no signed checkpoint covers, or for an entry the tree size does not include: tree sizes run from 1 to the latest checkpoint's size.",
    hint: "Read the latest checkpoint (GET /api/v1/audit/checkpoint) for the largest tree size, and ask for sizes at least the entry's position (its seq).",
  },
  AUDIT_ENTRY_NOT_FOUND: {
    status: 404,
    message: 'no audit entry {entryId} in this tenant',
    summary: "The entry id names no entry of the caller's tenant's audit trail.",
    hint: "Use an entry's id as the export or the auditTrail query shows it, with an API key of that entry's tenant.",
  },
  AUDIT_TREE_INCONSISTENT: {
    status: 500,
    message: 'the audit tree of tenant {tenantId} cannot be built: {problem}',
    summary:
      'The stored audit chain or its Merkle tree has a hole (a missing entry or node): no checkpoint or proof is made from it.',
    hint: 'Run `agent-gateway audit export` and `agent-gateway audit verify` on the tenant to find what was removed; restore the database from a backup.',
  },
  // Audit trail storage (docs/audit-storage.md).
  AUDIT_TENANT_UNKNOWN: {
    status: null,
    message: 'no tenant has the {lookup} {tenant}',
    summary: 'No tenant has this id (or name), so it has no audit chain.',
    hint: 'Check the tenant id or name; the tenants GraphQL query lists them.',
  },
  AUDIT_ENTRY_INVALID: {
    status: null,
    message: 'audit entry not written: {problem}',
    summary: 'An audit entry cannot be stored exactly as given, so it could not be verified later.',
    hint: 'Fields are non-empty strings without NUL or unpaired surrogates; metadata is a JSON object.',
  },
  // AgentIAM: identity credentials, delegation chains, proof of possession (docs/agentiam.md).
  AGENT_IDENTITY_REQUIRED: {
    status: 401,
    message: 'agent identity is required or incomplete: {missing}',
    summary:
      'The call needs an identity credential and an Agent-Proof: the tenant requires identity, or one of the two was sent without the other.',
    hint: 'Send agent_credential in the body and an Agent-Proof header signed by the agent key (docs/agentiam.md).',
  },
  CREDENTIAL_MALFORMED: {
    status: 403,
    message: 'hop {hop}: credential is malformed: {problem}',
    summary: 'A credential is not an identity or delegation credential of the expected shape.',
    hint: 'Send the credential exactly as issued; docs/agentiam.md shows both formats.',
  },
  CREDENTIAL_SIGNATURE_INVALID: {
    status: 403,
    message: 'hop {hop}: the proof does not verify: {reason}',
    summary: 'The credential was changed after signing, or was signed by another key.',
    hint: 'Issue a new credential (issueAgentCredential); never edit a signed credential.',
  },
  CREDENTIAL_ISSUER_UNTRUSTED: {
    status: 403,
    message: "hop {hop}: issuer {issuer} is not the caller's tenant CA",
    summary: "The root credential was not issued by the caller's tenant (did:svc:<tenantId>).",
    hint: 'Use a credential issued by this tenant with an API key of the same tenant.',
  },
  CREDENTIAL_EXPIRED: {
    status: 403,
    message: 'hop {hop}: credential expired at {expiredAt}',
    summary: 'The credential is past its expirationDate.',
    hint: 'Issue a new credential (issueAgentCredential, or delegate again).',
  },
  CREDENTIAL_NOT_YET_VALID: {
    status: 403,
    message: 'hop {hop}: credential is valid only from {validFrom}',
    summary: 'The credential issuanceDate is in the future.',
    hint: "Check the issuer's clock; the credential becomes usable at its issuanceDate.",
  },
  CREDENTIAL_REVOKED: {
    status: 403,
    message: 'hop {hop}: credential {credentialId} is revoked',
    summary: 'The credential is set in its revocation status list (revoked or agent killed).',
    hint: 'Issue a new credential if the agent is still trusted; a killed agent cannot get one.',
  },
  CREDENTIAL_TENANT_MISMATCH: {
    status: 403,
    message: 'hop {hop}: credential names tenant {tenantId}, not the caller tenant',
    summary: 'Every credential of a chain must belong to the tenant of the calling API key.',
    hint: "Use credentials issued and delegated within the API key's tenant.",
  },
  CREDENTIAL_SUBJECT_UNKNOWN: {
    status: 403,
    message: 'hop {hop}: {subject} is not the registered key of agent {agentId} in this tenant',
    summary: "A credential's subject must be the did:key of the registered agent it names.",
    hint: "Check the agent's publicKey (GraphQL agent query); delegate to the delegate's registered key.",
  },
  DELEGATION_BROKEN_LINK: {
    status: 403,
    message: 'hop {hop}: issuer {issuer} is not the previous subject {expected}',
    summary: 'A delegation link must be issued by the subject of the link before it.',
    hint: 'Order the chain from the root outwards; each link is made by the previous delegate.',
  },
  DELEGATION_SIGNATURE_INVALID: {
    status: 403,
    message: "hop {hop}: the link is not signed by the delegator's key: {reason}",
    summary: "A delegation link's proof does not verify with the key of the agent that delegated.",
    hint: "Sign the link with the delegator's own key (agent-gateway agentiam delegate --key-file).",
  },
  DELEGATION_TOOLS_WIDENED: {
    status: 403,
    message: 'hop {hop}: delegates tools the delegator does not have: {tools}',
    summary: 'A delegation may only narrow the tool set it received.',
    hint: "Delegate a subset of the previous hop's permittedTools.",
  },
  DELEGATION_EXPIRY_NOT_NESTED: {
    status: 403,
    message: 'hop {hop}: expires at {expiresAt}, after the previous hop ({limit})',
    summary: 'A delegation must not outlive the credential it was derived from.',
    hint: "Give the link an expirationDate no later than the previous hop's.",
  },
  DELEGATION_TOOL_NOT_PERMITTED: {
    status: 403,
    message: 'hop {hop}: tool {tool} is not in the delegated set',
    summary: 'The requested tool must appear in the tool set at every hop of the chain.',
    hint: 'Request a tool the whole chain permits, or delegate it at every hop.',
  },
  DELEGATION_DEPTH_EXCEEDED: {
    status: 403,
    message: 'hop {hop}: chain depth {depth} exceeds the tenant limit {limit}',
    summary: "The chain is longer than the gateway policy's maxDelegationDepth.",
    hint: 'Shorten the chain, or raise maxDelegationDepth (updateGatewayPolicy).',
  },
  DELEGATION_CYCLE: {
    status: 403,
    message: 'hop {hop}: agent {agentId} appears twice in the chain',
    summary: 'A delegation chain must not return to an agent already in it.',
    hint: 'Delegate from the original holder instead of passing authority back.',
  },
  AGENT_PROOF_INVALID: {
    status: 403,
    message: 'agent proof is invalid: {problem}',
    summary:
      "The Agent-Proof JWS is malformed, not signed by the credential subject's key, or for another request.",
    hint: 'Sign {htm, htu, body_sha256, iat, jti} with the agent key for this exact request (docs/agentiam.md).',
  },
  AGENT_PROOF_EXPIRED: {
    status: 403,
    message: 'agent proof iat {iat} is outside the accepted window of {windowSeconds} s',
    summary: 'An Agent-Proof is accepted for 60 seconds around its iat.',
    hint: "Make a fresh proof for every call; check the agent host's clock.",
  },
  AGENT_PROOF_REPLAYED: {
    status: 403,
    message: 'agent proof jti {jti} was already used',
    summary: 'Each Agent-Proof (its jti) is accepted once.',
    hint: 'Make a new proof with a fresh jti for every call.',
  },
  AGENT_PROOF_CAPACITY: {
    status: 503,
    message: 'more than {limit} agent proofs are live on this data plane; proof {jti} not accepted',
    summary:
      'The single-use proof store is full, so a proof cannot be remembered and is refused rather than risk a replay.',
    hint: 'Retry after a few seconds (a proof is remembered for its 60 s window); add data planes if it persists: the limit is per data plane.',
  },
  AGENT_IDENTITY_MISMATCH: {
    status: 403,
    message: 'the credential is for agent {credentialAgentId}, not {agentId}',
    summary: 'The presented credential (or the last link of its chain) names another agent.',
    hint: "Present the calling agent's own credential, or a chain ending at it.",
  },
  DID_METHOD_NOT_SUPPORTED: {
    status: 501,
    message: 'cannot resolve {did}: only did:svc and did:key are resolved here',
    summary: 'The DID resolver serves tenant DIDs (did:svc) and did:key only.',
    hint: 'Resolve other DID methods with a resolver for that method.',
  },
  SIGNING_KEY_UNAVAILABLE: {
    status: 503,
    message: 'the tenant signing key cannot be used: {reason}',
    summary: 'The tenant CA key could not be created or unsealed.',
    hint: 'Check AGENT_GATEWAY_MASTER_KEY (or the master-key file in the data dir); docs/agentiam.md explains key custody.',
  },
  MASTER_KEY_INVALID: {
    status: null,
    message: '{source} is not a 32-byte key: {problem}',
    summary: 'The master key is not 32 bytes written as base64url or hex.',
    hint: 'Generate one with `openssl rand -hex 32` and set AGENT_GATEWAY_MASTER_KEY to it.',
  },
  MASTER_KEY_MISMATCH: {
    status: null,
    message: 'the master key from {source} cannot open the sealed signing key {keyId}',
    summary: 'Sealed keys in the database were sealed under another master key.',
    hint: 'Start with the master key the keys were sealed under (the same AGENT_GATEWAY_MASTER_KEY on every process).',
  },
  // OAuth authorization server (docs/oauth.md). Answered as RFC 6749 error bodies
  // `{ error, error_description }`; the RFC's `error` string of each code is in shared/oauth.
  CIMD_URL_INVALID: {
    status: 400,
    message: 'client_id is not a client ID metadata document URL: {problem}',
    summary:
      'A client_id that is a URL must be a client ID metadata document URL: https, with a path, no fragment, no user or password, no dot segments.',
    hint: 'Use the https URL your metadata document is served at, exactly (docs/oauth.md, "Client ID metadata documents").',
  },
  CIMD_NOT_HTTPS: {
    status: 400,
    message: 'the client ID metadata document at {url} must be served over https',
    summary: 'A client ID metadata document is fetched over https only.',
    hint: 'Serve the document over https and use that URL as client_id (docs/oauth.md).',
  },
  CIMD_ADDRESS_FORBIDDEN: {
    status: 400,
    message:
      'the client ID metadata document host {host} resolves to {address}, which the gateway does not fetch from: {problem}',
    summary:
      'Client ID metadata documents are fetched from public addresses only (a fetch any client can trigger must not reach inside the network).',
    hint: 'Serve the document from a public address, or set AGENT_GATEWAY_CIMD_ALLOW_PRIVATE=true to allow private ones (the egress policy still applies).',
  },
  CIMD_REDIRECT_REFUSED: {
    status: 400,
    message: 'the client ID metadata document at {url} answered {status}, a redirect: not followed',
    summary: 'The document must be served at its URL itself; redirects are not followed.',
    hint: 'Use the final URL of the document as client_id, and its client_id field.',
  },
  CIMD_DOCUMENT_TOO_LARGE: {
    status: 400,
    message: 'the client ID metadata document at {url} is larger than {limit} bytes',
    summary: 'A client ID metadata document may be at most 5 KiB; nothing beyond is read.',
    hint: 'Keep the document to the metadata the client needs (client_id, client_name, redirect_uris…).',
  },
  CIMD_FETCH_TIMEOUT: {
    status: 400,
    message: 'the client ID metadata document at {url} did not arrive within {seconds} s',
    summary: 'The document must arrive within 5 seconds.',
    hint: 'Check that the document URL answers quickly from the gateway.',
  },
  CIMD_FETCH_FAILED: {
    status: 400,
    message: 'the client ID metadata document at {url} could not be fetched: {problem}',
    summary:
      'The document URL did not answer 200 with a document (connection, TLS, or HTTP status).',
    hint: 'Open the URL from the gateway host; its TLS certificate must be valid for the host name.',
  },
  CIMD_DOCUMENT_INVALID: {
    status: 400,
    message: 'the client ID metadata document at {url} is not valid: {problem}',
    summary:
      'The document must be a JSON object whose client_id is its URL exactly, with redirect_uris, no client secret, and token_endpoint_auth_method none or private_key_jwt (with jwks_uri or jwks); a jwks_uri must serve a JWK set.',
    hint: 'Fix the field the message names (docs/oauth.md, "Client ID metadata documents").',
  },
  OAUTH_INVALID_REQUEST: {
    status: 400,
    message: '{problem}',
    summary:
      'The OAuth request is missing a parameter, repeats one, or is malformed (invalid_request).',
    hint: 'The description names the parameter; docs/oauth.md lists what each endpoint takes.',
  },
  OAUTH_INVALID_CLIENT: {
    status: 401,
    message: 'client authentication failed: {problem}',
    summary:
      'The client is unknown, revoked, or did not authenticate as registered (invalid_client).',
    hint: 'Send client_id and client_secret (HTTP Basic or the form), or a private_key_jwt assertion signed by the agent key.',
  },
  OAUTH_INVALID_GRANT: {
    status: 400,
    message: '{problem}',
    summary: 'The grant is invalid, expired, revoked or for another client (invalid_grant).',
    hint: 'Start the grant again; a killed agent gets no tokens.',
  },
  OAUTH_INVALID_TARGET: {
    status: 400,
    message: 'resource {resource}: {problem}',
    summary:
      'The resource must be exactly one mcp://{serverId} (or <issuer>/mcp/{serverId}) the agent and client may reach (invalid_target).',
    hint: "Register the server in the tenant and list mcp://{serverId} in the agent's mcpAudiences and the client's audiences.",
  },
  OAUTH_UNSUPPORTED_GRANT_TYPE: {
    status: 400,
    message: 'grant_type {grantType} is not supported here',
    summary:
      'The token endpoint supports the grant types listed in the discovery document (unsupported_grant_type).',
    hint: 'Read grant_types_supported at /.well-known/oauth-authorization-server.',
  },
  OAUTH_UNAUTHORIZED_CLIENT: {
    status: 400,
    message: 'client {clientId} is not registered for grant_type {grantType}',
    summary: 'The client may not use this grant type (unauthorized_client).',
    hint: 'Register the client with the grant type it uses (POST /oauth/register, grant_types).',
  },
  OAUTH_TOKEN_OF_ANOTHER_CLIENT: {
    status: 400,
    message: 'the token was issued to another client; a client revokes only its own tokens',
    summary:
      'RFC 7009 §2.1: a client may revoke only the tokens issued to it (unauthorized_client).',
    hint: 'Revoke the token with the client it was issued to, or as an operator (revokeIssuedToken).',
  },
  OAUTH_RATE_LIMITED: {
    status: 429,
    message: 'too many failed client authentications; retry after {retryAfterSeconds} s',
    summary:
      'Failed client authentications are limited per client and per address (temporarily_unavailable).',
    hint: 'Fix the client credentials; the Retry-After header says when to try again.',
  },
  AUDIT_ENTRY_DUPLICATE: {
    status: null,
    message: 'audit entry not written: an entry with id {entryId} already exists',
    summary: 'An audit entry with this id already exists.',
    hint: 'Leave the id out to get a fresh UUID, or use a new one.',
  },
  AUDIT_WRITE_FAILED: {
    status: null,
    message: 'a batch of {count} audit entries could not be committed to {location}: {reason}',
    summary: 'A batch of audit entries could not be committed; none of it was written.',
    hint: 'Read the database error in the message; the caller must not report the action as audited.',
  },
  AUDIT_WRITER_CLOSED: {
    status: null,
    message: 'the audit writer is closed: entry not written',
    summary: 'The audit writer is closed (the process is shutting down) and takes no new entries.',
    hint: 'Append before closing the writer; a closing gateway refuses audited requests.',
  },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The message template of a code, as a string literal type. */
export type ErrorMessageTemplate<Code extends ErrorCode> = (typeof ERROR_CODES)[Code]['message'];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}
