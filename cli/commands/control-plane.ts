// `agent-gateway control-plane`: the system of record on its own: database, migrations, first-start
// bootstrap, GraphQL and the configuration stream that remote data planes subscribe to
// (docs/config-push.md). No data-plane routes. Remote data planes share its PostgreSQL database,
// so it refuses the embedded one.
import type { Command } from 'commander';
import { formatErrorLine, GatewayError } from '../../shared/errors/index.js';
import { type GatewayConfig, loadConfig } from '../config.js';
import { printAdminKey, runUntilSignal } from '../run-until-signal.js';

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
      onAdminKeyCreated: printAdminKey,
    }),
  );
}
