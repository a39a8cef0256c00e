// `agent-gateway start`: runs the gateway until SIGINT/SIGTERM. A failure to start prints one line
// (`CODE: what failed (hint: what to do)`) on stderr and exits 1; the first signal shuts down
// gracefully (drain, flush the audit queue), a second one exits at once.
import type { Command } from 'commander';
import { loadConfig } from '../../runtime/config.js';
import { renderConfigHelp } from '../../runtime/config-docs.js';
import { formatErrorLine } from '../../shared/errors/index.js';
import { printAdminKey, runUntilSignal } from '../run-until-signal.js';

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'Start the gateway: control plane and data plane in one process on one port, with the ' +
        'embedded database unless DATABASE_URL is set.',
    )
    .addHelpText('after', renderConfigHelp)
    .action(async () => {
      process.exitCode = await runStart();
    });
}

async function runStart(): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
  // Loaded here, not at the top: other commands must not pay for the server's imports.
  const { createLogger } = await import('../logger.js');
  const { startGateway } = await import('../../runtime/start-gateway.js');
  const logger = createLogger(config.logLevel);
  return runUntilSignal(logger, config.shutdownTimeoutMs, () =>
    startGateway(config, { logger, onAdminKeyCreated: printAdminKey }),
  );
}
