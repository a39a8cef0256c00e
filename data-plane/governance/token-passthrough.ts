// Spec §5.4: an agent must never hand the gateway a bearer token to pass on to the MCP server;
// the gateway mints its own, bound to that server. We look where such a token would travel: the
// forwarding headers and all of `params._meta` of the JSON-RPC message
// (shared/mcp/meta-credentials.ts). One function for both surfaces: inspect and the MCP proxy
// (tools/call through screenCall, every other message it relays upstream directly).
import type { IncomingHttpHeaders } from 'node:http';
import { formatErrorMessage } from '../../shared/errors/index.js';
import { findMetaCredential, META_SCAN_LIMITS } from '../../shared/mcp/meta-credentials.js';
import type { Block } from './exchange.js';

const FORWARDING_HEADERS = ['mcp-authorization', 'x-upstream-authorization', 'x-mcp-authorization'];

/**
 * Why a message may not go upstream as it is: a token in a forwarding header or in `_meta`
 * (MCP_TOKEN_PASSTHROUGH), or a `_meta` too large to be checked (MCP_META_TOO_LARGE); null when
 * it is clean. `where` names `params` in the message (`request.params`, `result` of an answer).
 * The message names where the token was, never the token.
 */
export function refusePassthrough(
  headers: IncomingHttpHeaders | undefined,
  params: Readonly<Record<string, unknown>> | undefined,
  where = 'request.params',
): Block | null {
  if (headers) {
    for (const name of FORWARDING_HEADERS) {
      if (headers[name] !== undefined) return passthrough(`header ${name}`);
    }
  }
  const meta = params?._meta;
  if (meta === undefined) return null;
  const finding = findMetaCredential(meta, `${where}._meta`);
  if (finding === null) return null;
  if (finding.kind === 'credential') return passthrough(finding.path);
  return {
    code: 'MCP_META_TOO_LARGE',
    message: formatErrorMessage('MCP_META_TOO_LARGE', {
      location: finding.path,
      maxDepth: META_SCAN_LIMITS.maxDepth,
      maxNodes: META_SCAN_LIMITS.maxNodes,
    }),
  };
}

function passthrough(location: string): Block {
  return {
    code: 'MCP_TOKEN_PASSTHROUGH',
    message: formatErrorMessage('MCP_TOKEN_PASSTHROUGH', { location }),
  };
}
