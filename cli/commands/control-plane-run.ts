// What `agent-gateway control-plane` runs (control-plane.ts registers it): the control plane alone
// until SIGINT/SIGTERM, on PostgreSQL, behind the deployment's public URL. Part of the server
// bundle (server-commands.ts).
import { type GatewayConfig, loadConfig } from '../../runtime/config.js';
import { startGateway } from '../../runtime/start-gateway.js';
import { formatErrorLine } from '../../shared/errors/index.js';
import { createLogger } from '../logger.js';
import { printAdminKey, runUntilSignal } from '../run-until-signal.js';
import { requirePostgres, requirePublicUrl } from './split-deployment.js';

export async function runControlPlane(): Promise<number> {
  let config: GatewayConfig;
  try {
    config = loadConfig();
    requirePostgres(config, 'control-plane');
    requirePublicUrl(config, 'control-plane');
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
  const logger = createLogger(config.logLevel);
  return runUntilSignal(logger, config.shutdownTimeoutMs, () =>
    startGateway(config, {
      logger,
      role: 'control-plane',
      onAdminKeyCreated: printAdminKey,
    }),
  );
}
