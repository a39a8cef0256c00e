// What `agent-gateway start` runs (start.ts registers it): the gateway until SIGINT/SIGTERM. A
// failure to start prints one line (`CODE: what failed (hint: what to do)`) on stderr and exits 1;
// the first signal shuts down gracefully (drain, flush the audit queue), a second one exits at
// once. Part of the server bundle (server-commands.ts).
import { loadConfig } from '../../runtime/config.js';
import { startGateway } from '../../runtime/start-gateway.js';
import { formatErrorLine } from '../../shared/errors/index.js';
import { createLogger } from '../logger.js';
import { printAdminKey, runUntilSignal } from '../run-until-signal.js';

export async function runStart(): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
  const logger = createLogger(config.logLevel);
  return runUntilSignal(logger, config.shutdownTimeoutMs, () =>
    startGateway(config, { logger, onAdminKeyCreated: printAdminKey }),
  );
}
