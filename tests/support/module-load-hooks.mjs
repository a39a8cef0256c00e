// Module customization hooks (node:module `register`) that append every module URL the process
// resolves to the file named by AGENT_GATEWAY_TEST_MODULE_LOG, one per line: how a test sees what
// a CLI command loads (record-module-loads.mjs registers them, through NODE_OPTIONS=--import).
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(process.env.AGENT_GATEWAY_TEST_MODULE_LOG, `${resolved.url}\n`);
  return resolved;
}
