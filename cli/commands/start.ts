// `agent-gateway start`: runs the gateway until SIGINT/SIGTERM (start-run.ts, loaded from the
// server bundle when the command runs, so other commands do not pay for the server's imports).
import type { Command } from 'commander';
import { renderConfigHelp } from '../../runtime/config-docs.js';
import { loadServerCommands } from '../load-server-commands.js';

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'Start the gateway: control plane and data plane in one process on one port, with the ' +
        'embedded database unless DATABASE_URL is set.',
    )
    .addHelpText('after', renderConfigHelp)
    .action(async () => {
      const { runStart } = await loadServerCommands();
      process.exitCode = await runStart();
    });
}
