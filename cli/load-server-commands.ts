// Loads what the server commands run (server-commands.ts). Built, that is one bundle,
// dist/bundle/server-commands.js (cli/tools/bundle-server-commands.mjs): Node resolving and linking
// the gateway's ~1 200 modules one by one cost every process ~1.9 CPU-s before it did anything,
// the bundle ~0.7 (docs/PERFORMANCE.md, "One pool for the test projects, and the server bundle").
// From the sources (tsx: `npm run dev`, the tests) the modules themselves.
export type ServerCommands = typeof import('./server-commands.js');

const BUNDLE = new URL('../bundle/server-commands.js', import.meta.url);

export function loadServerCommands(): Promise<ServerCommands> {
  if (import.meta.url.endsWith('.ts')) return import('./server-commands.js');
  return import(BUNDLE.href) as Promise<ServerCommands>;
}
