// Runs a server command until SIGINT/SIGTERM (`start`, `control-plane`, `data-plane`): signals are
// handled from the first moment, so one that arrives while the server is still starting stops it
// as soon as the start completes instead of killing it half-way.
import type { Logger } from 'pino';
import { formatErrorLine } from '../shared/errors/index.js';

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

/** Prints a first start's admin API key on stderr: the one time it is ever shown. */
export function printAdminKey(key: string, file: string): void {
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
}
