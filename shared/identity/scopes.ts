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

/**
 * What each scope lets a key do, in one line: the console's API keys screen shows these beside
 * its scope checkboxes (docs/security.md has the full table of operations per scope).
 */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = Object.freeze({
  'agents:execute': 'Inspect tool calls and verify delegation chains: the key an agent runs with.',
  'agents:manage': 'Spawn, list, read and change agents; issue credentials and OAuth clients.',
  'agents:kill': 'Kill an agent (the kill switch), by its id or public key.',
  'policies:manage': 'Change the gateway policy, MCP servers, tool pins and NPL policies.',
  'approvals:decide': 'See held calls and approve or reject them.',
  'audit:read': 'Read, verify and export the audit trail; read the overview and the queue.',
  'keys:manage': 'List, create and revoke API keys of the tenant (up to its own scopes).',
  'tenants:admin': 'Create tenants and see data planes: gateway administrators.',
});

export const ALL_SCOPES: readonly Scope[] = Object.freeze(Object.values(SCOPES));

const SCOPE_SET: ReadonlySet<string> = new Set(ALL_SCOPES);

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && SCOPE_SET.has(value);
}
