// Spec §5.4: an agent must never hand the gateway a bearer token to pass on to the MCP server;
// the gateway mints its own, bound to that server. We look where such a token would travel: the
// forwarding headers and `params._meta` of the JSON-RPC message.
import type { IncomingHttpHeaders } from 'node:http';

const FORWARDING_HEADERS = ['mcp-authorization', 'x-upstream-authorization', 'x-mcp-authorization'];
const TOKEN_KEYS =
  /^(authorization|auth|token|access_?token|bearer|bearer_?token|api_?key|x-?api-?key|id_?token)$/i;
const BEARER_VALUE = /^\s*bearer\s+\S/i;

/** Where a passed-through token was found, or null. */
export function findPassthroughToken(
  headers: IncomingHttpHeaders,
  params: Readonly<Record<string, unknown>> | undefined,
): string | null {
  for (const name of FORWARDING_HEADERS) {
    if (headers[name] !== undefined) return `header ${name}`;
  }
  const meta = params?._meta;
  if (typeof meta === 'object' && meta !== null && !Array.isArray(meta)) {
    for (const [key, value] of Object.entries(meta)) {
      if (TOKEN_KEYS.test(key)) return `request.params._meta.${key}`;
      if (typeof value === 'string' && BEARER_VALUE.test(value))
        return `request.params._meta.${key}`;
    }
  }
  return null;
}
