// `agent-gateway control-plane`: the system of record on its own: database, migrations, first-start
// bootstrap, GraphQL and the configuration stream that remote data planes subscribe to
// (docs/config-push.md). No data-plane routes. Remote data planes share its PostgreSQL database,
// so it refuses the embedded one.
import type { Command } from 'commander';
import type { Logger } from 'pino';
import { formatErrorLine, GatewayError } from '../../shared/errors/index.js';
import { type GatewayConfig, loadConfig } from '../config.js';

export function registerControlPlaneCommand(program: Command): void {
  program
    .command('control-plane')
    .description(
      'Start the control plane alone (GraphQL and the configuration stream for data planes ' +
        'started with `agent-gateway data-plane`); needs DATABASE_URL.',
    )
    .action(async () => {
      process.exitCode = await runControlPlane();
    });
}

/** Remote data planes write audit entries and approvals to the control plane's database. */
export function requirePostgres(config: GatewayConfig): void {
  if (!config.databaseUrl) {
    throw new GatewayError(
      'DATA_PLANE_REQUIRES_POSTGRES',
      'separate control-plane and data-plane processes need PostgreSQL (DATABASE_URL is not set)',
    );
  }
}

async function runControlPlane(): Promise<number> {
  let config: GatewayConfig;
  try {
    config = loadConfig();
    requirePostgres(config);
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
  const { createLogger } = await import('../logger.js');
  const { startGateway } = await import('../gateway.js');
  const logger = createLogger(config.logLevel);
  return runUntilSignal(logger, config.shutdownTimeoutMs, () =>
    startGateway(config, {
      logger,
      role: 'control-plane',
      onAdminKeyCreated(key, file) {
        process.stderr.write(
          `\nFirst start: created tenant "default" and its admin API key (shown only this once):\n\n` +
            `    ${key}\n\nIt is also in ${file} (mode 0600).\n\n`,
        );
      },
    }),
  );
}

/**
 * Starts a server, then waits for SIGINT/SIGTERM and closes it: a failure prints one line and
 * returns 1; a second signal exits at once; a shutdown longer than `shutdownTimeoutMs` exits 1.
 */
export async function runUntilSignal(
  logger: Logger,
  shutdownTimeoutMs: number,
  start: () => Promise<{ close(): Promise<void> }>,
): Promise<number> {
  let stopSignal: NodeJS.Signals | undefined;
  let onStop: (() => void) | undefined;
  const handleSignal = (signal: NodeJS.Signals) => {
    if (stopSignal) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(130);
    }
    stopSignal = signal;
    logger.info({ signal }, 'signal received');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs: shutdownTimeoutMs }, 'shutdown timed out: exiting');
      process.exit(1);
    }, shutdownTimeoutMs);
    timer.unref();
    onStop?.();
  };
  process.on('SIGINT', handleSignal);
  process.on('SIGTERM', handleSignal);
  let server: { close(): Promise<void> };
  try {
    server = await start();
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
  await new Promise<void>((resolve) => {
    onStop = resolve;
    if (stopSignal) resolve();
  });
  try {
    await server.close();
    return 0;
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
}
