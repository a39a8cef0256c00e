// The transport spec's DNS-rebinding rule: a server MUST validate Origin on every request. A web
// page on another site could otherwise make the victim's browser drive a gateway reachable from
// it (its own machine, its intranet). Accepted: no Origin at all (MCP clients are not browsers and
// send none), the gateway's own public origin, and loopback origins (a local tool's UI talking to
// a local gateway). Everything else is 403 MCP_ORIGIN_FORBIDDEN before anything is read.

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isOriginAllowed(origin: string | undefined, publicOrigin: string): boolean {
  if (origin === undefined) return true;
  if (origin === publicOrigin) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.origin !== origin) return false;
  return LOOPBACK_HOSTS.has(url.hostname) || url.hostname.endsWith('.localhost');
}
