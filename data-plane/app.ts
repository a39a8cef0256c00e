// Builds the data plane's Fastify app without listening, so tests can `inject` and the process
// entry can decide where to listen. Bodies are bounded and requests time out: a gateway must not
// be the component that an agent can exhaust.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { errorsPlugin } from './plugins/errors.js';
import { healthPlugin, type Readiness } from './plugins/health.js';
import { type CompliancePluginOptions, compliancePlugin } from './routes/compliance/index.js';

export interface DataPlaneAppOptions {
  readonly logger: FastifyBaseLogger;
  readonly readiness: Readiness;
  /** Largest accepted request body in bytes. */
  readonly bodyLimit?: number;
  /** Longest a request may take, end to end, in milliseconds. */
  readonly requestTimeoutMs?: number;
  /** Public compliance batch validation: rate limit and size limits (production defaults). */
  readonly compliance?: CompliancePluginOptions;
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
    // A body carrying `__proto__` or `constructor.prototype` keys is refused (400), never merged.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
  });
  // fastify-plugin wrapped: its error and not-found handlers apply to the whole app.
  await app.register(errorsPlugin);
  await app.register(healthPlugin, { readiness: options.readiness });
  await app.register(compliancePlugin, options.compliance ?? {});
  return app;
}
