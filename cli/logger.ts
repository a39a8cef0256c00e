// The process logger: pino, JSON lines on stdout, ISO timestamps. Secrets never reach it: request
// logs carry no headers or bodies, and the paths below are redacted should anything log them.
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../runtime/config.js';

/** `destination` defaults to stdout (benchmarks pass /dev/null to pay the cost without the noise). */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'agent-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
