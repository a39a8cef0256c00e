// The ids the gateway passes around, as branded strings: a tenant id cannot be handed where an
// agent id is expected, though both are plain strings at run time. A brand is a type only: the
// `as…` functions below are identity casts, called where an id enters (a request is parsed, a
// row or a received snapshot is read), and cost nothing on the hot path. Everything downstream
// takes the branded type, so a swapped argument is a compile error instead of a lookup that
// silently finds nothing, or finds another tenant's row.

export type TenantId = string & { readonly __brand: 'TenantId' };
export type AgentId = string & { readonly __brand: 'AgentId' };
export type ApprovalId = string & { readonly __brand: 'ApprovalId' };
/** A tenant's name for one of its MCP servers (unique inside the tenant, not across tenants). */
export type ServerId = string & { readonly __brand: 'ServerId' };

export function asTenantId(value: string): TenantId {
  return value as TenantId;
}

export function asAgentId(value: string): AgentId {
  return value as AgentId;
}

export function asApprovalId(value: string): ApprovalId {
  return value as ApprovalId;
}

export function asServerId(value: string): ServerId {
  return value as ServerId;
}
