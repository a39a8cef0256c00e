// `agent-gateway start`: runs the gateway until SIGINT/SIGTERM. A failure to start prints one line
// (`CODE: what failed (hint: what to do)`) on stderr and exits 1; the first signal shuts down
// gracefully (drain, flush the audit queue), a second one exits at once.
import type { Command } from 'commander';
import { formatErrorLine } from '../../shared/errors/index.js';
import { CONFIG_VARIABLES, loadConfig } from '../config.js';
import type { RunningGateway } from '../gateway.js';

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'Start the gateway: control plane and data plane in one process on one port, with the ' +
        'embedded database unless DATABASE_URL is set.',
    )
    .addHelpText('after', `\nConfiguration (environment variables):\n${configurationHelp()}`)
    .action(async () => {
      process.exitCode = await runStart();
    });
}

function configurationHelp(): string {
  return CONFIG_VARIABLES.map(
    ([name, fallback, meaning]) => `  ${name.padEnd(34)} ${meaning} Default: ${fallback}`,
  ).join('\n');
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
  const { startGateway } = await import('../gateway.js');
  const logger = createLogger(config.logLevel);
  // Signals are handled from the first moment: one that arrives while the gateway is still
  // starting stops it as soon as the start completes, instead of killing it half-way.
  let stopSignal: NodeJS.Signals | undefined;
  let onStop: ((signal: NodeJS.Signals) => void) | undefined;
  const handleSignal = (signal: NodeJS.Signals) => {
    if (stopSignal) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(130);
    }
    stopSignal = signal;
    logger.info({ signal }, 'signal received');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out: exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    onStop?.(signal);
  };
  process.on('SIGINT', handleSignal);
  process.on('SIGTERM', handleSignal);

  let gateway: RunningGateway;
  try {
    gateway = await startGateway(config, {
      logger,
      onAdminKeyCreated(key, file) {
        process.stderr.write(
          [
            '',
            'First start: created tenant "default" and its admin API key (shown only this once;',
            'the gateway stores only its hash):',
            '',
            `    ${key}`,
            '',
            `It is also in ${file} (mode 0600). Send it as "Authorization: Bearer <key>".`,
            '',
          ].join('\n'),
        );
      },
    });
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
  const stopped = new Promise<void>((resolve) => {
    onStop = () => resolve();
    if (stopSignal) resolve();
  });
  await stopped;
  try {
    await gateway.close();
    return 0;
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
}
