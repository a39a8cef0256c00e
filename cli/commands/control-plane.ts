// `agent-gateway control-plane`: the system of record on its own: database, migrations, first-start
// bootstrap, GraphQL and the configuration stream that remote data planes subscribe to
// (docs/config-push.md). No data-plane routes. Remote data planes share its PostgreSQL database,
// so it refuses the embedded one.
import type { Command } from 'commander';
import { type GatewayConfig, loadConfig } from '../../runtime/config.js';
import { renderConfigHelp } from '../../runtime/config-docs.js';
import { formatErrorLine, gatewayError } from '../../shared/errors/index.js';
import { printAdminKey, runUntilSignal } from '../run-until-signal.js';

export function registerControlPlaneCommand(program: Command): void {
  program
    .command('control-plane')
    .description(
      'Start the control plane alone (GraphQL and the configuration stream for data planes ' +
        'started with `agent-gateway data-plane`); needs DATABASE_URL.',
    )
    .addHelpText('after', renderConfigHelp)
    .action(async () => {
      process.exitCode = await runControlPlane();
    });
}

/**
 * A split deployment has one public URL in front of every process: the issuer of every token, the
 * audience a data plane accepts, the htu of agent proofs, the base of status-list URLs. Derived
 * from each process's own address it would differ per process (tokens minted by one data plane
 * refused by the others), so both split commands refuse to start without it.
 */
export function requirePublicUrl(
  config: GatewayConfig,
  command: 'control-plane' | 'data-plane',
): void {
  if (!config.publicUrl) {
    throw gatewayError('PUBLIC_URL_REQUIRED', { command });
  }
}

/** Remote data planes write audit entries and approvals to the control plane's database. */
export function requirePostgres(
  config: GatewayConfig,
  command: 'control-plane' | 'data-plane',
): void {
  if (!config.databaseUrl) {
    throw gatewayError(
      command === 'control-plane'
        ? 'CONTROL_PLANE_REQUIRES_POSTGRES'
        : 'DATA_PLANE_REQUIRES_POSTGRES',
    );
  }
}

async function runControlPlane(): Promise<number> {
  let config: GatewayConfig;
  try {
    config = loadConfig();
    requirePostgres(config, 'control-plane');
    requirePublicUrl(config, 'control-plane');
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
  const { createLogger } = await import('../logger.js');
  const { startGateway } = await import('../../runtime/start-gateway.js');
  const logger = createLogger(config.logLevel);
  return runUntilSignal(logger, config.shutdownTimeoutMs, () =>
    startGateway(config, {
      logger,
      role: 'control-plane',
      onAdminKeyCreated: printAdminKey,
    }),
  );
}
