// `agent-gateway control-plane`: the system of record on its own: database, migrations, first-start
// bootstrap, GraphQL and the configuration stream that remote data planes subscribe to
// (docs/config-push.md). No data-plane routes. Remote data planes share its PostgreSQL database,
// so it refuses the embedded one (control-plane-run.ts, loaded from the server bundle).
import type { Command } from 'commander';
import { renderConfigHelp } from '../../runtime/config-docs.js';
import { loadServerCommands } from '../load-server-commands.js';

export function registerControlPlaneCommand(program: Command): void {
  program
    .command('control-plane')
    .description(
      'Start the control plane alone (GraphQL and the configuration stream for data planes ' +
        'started with `agent-gateway data-plane`); needs DATABASE_URL.',
    )
    .addHelpText('after', renderConfigHelp)
    .action(async () => {
      const { runControlPlane } = await loadServerCommands();
      process.exitCode = await runControlPlane();
    });
}
