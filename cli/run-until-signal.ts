// Runs a server command until SIGINT/SIGTERM (`start`, `control-plane`, `data-plane`): signals are
// handled from the first moment, so one that arrives while the server is still starting stops it
// as soon as the start completes instead of killing it half-way.
//
// The process always ends within the shutdown timeout. Two things used to defeat that:
// - pino flushes its buffered lines synchronously on `exit`, retrying for as long as stdout refuses
//   them; with stdout a pipe its reader no longer drains (a supervisor that stopped reading after
//   `ready`) or no longer has, every `process.exit` spun there forever. A forced exit gives stdout
//   LAST_LINES_MS, then drops what it has not taken.
// - a parent that forwards signals (`npm start` forwards SIGINT/SIGTERM to its child) repeats the
//   signal the process group already delivered, which read as "a second signal" and skipped the
//   graceful shutdown. The same signal again within REPEATED_SIGNAL_MS is the same request.
// Under npm, npm going away without a word to the gateway is a stop request too
// (npm-parent-watch.ts).
import pino, { type Logger } from 'pino';
import { formatErrorLine } from '../shared/errors/index.js';
import { watchNpmParent } from './npm-parent-watch.js';

/** How soon the same signal again counts as a forwarded copy of the first, not a second request. */
export const REPEATED_SIGNAL_MS = 1000;
/** The longest a forced exit waits for stdout to take the last log lines. */
const LAST_LINES_MS = 250;

/**
 * Starts a server, then waits for SIGINT/SIGTERM and closes it: a failure prints one line and
 * returns 1; a second signal exits at once (130); a shutdown longer than `shutdownTimeoutMs`
 * exits 1. Once closed, the process ends when its last log lines are written, or at the timeout.
 */
export async function runUntilSignal(
  logger: Logger,
  shutdownTimeoutMs: number,
  start: () => Promise<{ close(): Promise<void>; readonly fatal?: Promise<Error> }>,
): Promise<number> {
  let stopSignal: NodeJS.Signals | undefined;
  let stopAt = 0;
  let closed = false;
  let shutdownTimer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  const handleSignal = (signal: NodeJS.Signals) => {
    if (stopSignal) {
      if (signal === stopSignal && performance.now() - stopAt < REPEATED_SIGNAL_MS) return;
      logger.warn({ signal }, 'second signal: exiting without waiting');
      exitSoon(logger, 130);
      return;
    }
    logger.info({ signal }, 'signal received');
    stop(signal);
  };
  const stop = (signal: NodeJS.Signals) => {
    stopSignal = signal;
    stopAt = performance.now();
    // Keeps the process alive until the shutdown settles: a close that waits on something no
    // handle stands for would otherwise end the process at once (status 13) without a word.
    // Unref'd once closed, so a process with nothing left to do ends without waiting for it.
    shutdownTimer = setTimeout(() => {
      if (closed) {
        logger.warn({ timeoutMs: shutdownTimeoutMs }, 'stopped, but still busy: exiting');
        exitSoon(logger, 0);
      } else {
        logger.error({ timeoutMs: shutdownTimeoutMs }, 'shutdown timed out: exiting');
        exitSoon(logger, 1);
      }
    }, shutdownTimeoutMs);
    onStop?.();
  };
  process.on('SIGINT', handleSignal);
  process.on('SIGTERM', handleSignal);
  // Under npm, npm going away is a stop request like SIGTERM (npm-parent-watch.ts).
  const unwatchParent = watchNpmParent(
    { env: process.env, parentPid: () => process.ppid },
    (parentPid) => {
      if (stopSignal) return;
      logger.warn({ parentPid }, 'npm, which started the gateway, is gone: shutting down');
      stop('SIGTERM');
    },
  );
  let server: { close(): Promise<void>; readonly fatal?: Promise<Error> };
  try {
    server = await start();
  } catch (error) {
    shutdownTimer?.unref();
    unwatchParent();
    console.error(formatErrorLine(error));
    return 1;
  }
  // A server that must stop for good (a data plane whose control plane has another public URL)
  // is closed like on a signal, and the process exits 1 with the error on stderr.
  let failure: Error | undefined;
  await new Promise<void>((resolve) => {
    onStop = resolve;
    if (stopSignal) resolve();
    void server.fatal?.then((error) => {
      failure = error;
      resolve();
    });
  });
  try {
    await server.close();
    closed = true;
    if (failure) {
      console.error(formatErrorLine(failure));
      return 1;
    }
    return 0;
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  } finally {
    shutdownTimer?.unref();
    unwatchParent();
  }
}

/**
 * Exits within LAST_LINES_MS: the log lines already written by then reach stdout, the rest are
 * dropped. pino's own exit hook would write them synchronously, retrying for as long as stdout
 * refuses them (forever with a full pipe or a reader that is gone).
 */
function exitSoon(logger: Logger, code: number): void {
  const destination = (logger as unknown as Record<symbol, { destroy?(): void } | undefined>)[
    pino.symbols.streamSym
  ];
  const exit = () => {
    destination?.destroy?.();
    process.exit(code);
  };
  setTimeout(exit, LAST_LINES_MS);
  logger.flush(exit);
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
