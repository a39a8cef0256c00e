// Who the gateway is, as MCP names a server (`serverInfo`: name and version): what a stateless
// client sees in server/discover's result `_meta`, beside the upstream's own.
import { packageVersion } from '../../shared/package-root.js';

let cached: { readonly name: string; readonly version: string } | undefined;

export function gatewayServerInfo(): { readonly name: string; readonly version: string } {
  cached ??= Object.freeze({ name: 'agent-gateway', version: packageVersion() });
  return cached;
}
