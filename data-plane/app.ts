// Builds the data plane's Fastify app without listening, so tests can `inject` and the process
// entry can decide where to listen. Bodies are bounded and requests time out: a gateway must not
// be the component that an agent can exhaust.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { healthPlugin, type Readiness } from './plugins/health.js';

export interface DataPlaneAppOptions {
  readonly logger: FastifyBaseLogger;
  readonly readiness: Readiness;
  /** Largest accepted request body in bytes. */
  readonly bodyLimit?: number;
  /** Longest a request may take, end to end, in milliseconds. */
  readonly requestTimeoutMs?: number;
}

export async function buildDataPlaneApp(options: DataPlaneAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    connectionTimeout: 60_000,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  await app.register(healthPlugin, { readiness: options.readiness });
  return app;
}
