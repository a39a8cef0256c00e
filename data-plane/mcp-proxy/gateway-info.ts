// Who the gateway is, as MCP names a server (`serverInfo`: name and version): what a stateless
// client sees in server/discover's result `_meta`, beside the upstream's own. The version is the
// installed package's, read once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPackageRoot } from '../../shared/package-root.js';

let cached: { readonly name: string; readonly version: string } | undefined;

export function gatewayServerInfo(): { readonly name: string; readonly version: string } {
  if (cached === undefined) {
    let version = '0.0.0';
    try {
      const manifest = JSON.parse(readFileSync(join(findPackageRoot(), 'package.json'), 'utf8'));
      if (typeof manifest.version === 'string') version = manifest.version;
    } catch {
      // A gateway without its package.json still answers; its version is then unknown.
    }
    cached = Object.freeze({ name: 'agent-gateway', version });
  }
  return cached;
}
