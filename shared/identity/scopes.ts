// API key scopes. The first two are the spec's (§5.2); the rest are the administrative scopes the
// operator API needs (docs/security.md has the table of which operation needs which scope).

export const SCOPES = {
  /** Inspect tool calls; verify delegation chains. */
  AGENTS_EXECUTE: 'agents:execute',
  /** Spawn agents, issue credentials, register OAuth clients. */
  AGENTS_MANAGE: 'agents:manage',
  /** Kill an agent (kill switch v2). */
  AGENTS_KILL: 'agents:kill',
  /** Change the gateway policy, MCP servers and NPL policies. */
  POLICIES_MANAGE: 'policies:manage',
  /** Approve or reject held calls. */
  APPROVALS_DECIDE: 'approvals:decide',
  /** Read and export the audit trail. */
  AUDIT_READ: 'audit:read',
  /** Create and revoke API keys of the tenant. */
  KEYS_MANAGE: 'keys:manage',
  /** Manage tenants and data planes (gateway administrators). */
  TENANTS_ADMIN: 'tenants:admin',
} as const;

export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

export const ALL_SCOPES: readonly Scope[] = Object.freeze(Object.values(SCOPES));

const SCOPE_SET: ReadonlySet<string> = new Set(ALL_SCOPES);

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && SCOPE_SET.has(value);
}
