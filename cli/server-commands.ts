// The server bundle's entry: what `start`, `control-plane` and `data-plane` run, each from loading
// its configuration to its last log line. The build bundles this module and everything it imports
// into dist/bundle/server-commands.js (cli/tools/bundle-server-commands.mjs), which the commands
// load through load-server-commands.ts. Only strings and exit codes cross between the bundle and
// the CLI's own modules: each holds its own copy of what both import (the error classes among
// them), so no object made on one side may be checked with `instanceof` on the other.
export { runControlPlane } from './commands/control-plane-run.js';
export { runDataPlane } from './commands/data-plane-run.js';
export { runStart } from './commands/start-run.js';
