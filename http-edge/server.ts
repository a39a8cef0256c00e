// The HTTP edge every gateway process shares, before any route: a Fastify instance with bounded
// bodies and timeouts (a gateway must not be the component an agent can exhaust), the one error
// model, liveness/readiness, Prometheus metrics and the refusal audit. API-key authentication
// needs the snapshot store, so the data plane registers it (data-plane/plugins/auth.ts, from
// data-plane/app.ts). Building is separate from listening, so tests `inject` and the composition
// decides where to listen.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayError } from '../shared/errors/index.js';
import { invalidField } from '../shared/validation/field-issues.js';
import { closeConnectionsWhenIdle } from './drain.js';
import { errorsPlugin, sendError, toGatewayError } from './errors.js';
import { healthPlugin, type Readiness } from './health.js';
import { metricsPlugin, type ServedMetrics } from './metrics.js';
import type { RefusalAuditor } from './refusal-auditor.js';
import { refusalsPlugin } from './refusals.js';

export interface ServerOptions {
  readonly logger: Logger;
  readonly readiness: Readiness;
  /** Served at /metrics when given. */
  readonly metrics?: ServedMetrics | undefined;
  /** Largest accepted request body in bytes (default 1 MiB). */
  readonly bodyLimit?: number | undefined;
  /** Slow clients: how long the server waits for them (docs/inspect.md, "Timeouts"). */
  readonly timeouts?: ServerTimeouts | undefined;
  /**
   * Fastify's two lines per request (received, completed). Off by default: at tens of thousands
   * of calls a second they cost more than the inspection itself, and every inspect decision has
   * its own line (data-plane/governance/exchange.ts).
   */
  readonly accessLog?: boolean | undefined;
  /**
   * Audits authentication, authorization and transport refusals, bounded (refusals.ts).
   * Absent: refusals are answered and not audited.
   */
  readonly refusals?: Pick<RefusalAuditor, 'refuse'> | undefined;
}

/**
 * How long a client may hold a socket, in milliseconds. A client that sends its request slowly
 * (a byte at a time) is answered 408 and disconnected once `headersMs` passes without complete
 * headers or `requestMs` without the complete request; an idle socket is closed after `idleMs`
 * without a byte either way, and a kept-alive one after `keepAliveMs` between requests. These
 * bound what the client sends, not how long an answer may take: a long-poll or a slow upstream
 * is bounded by its own timeout.
 */
export interface ServerTimeouts {
  /** Complete request headers (default 10 s). At most `requestMs`. */
  readonly headersMs?: number | undefined;
  /** The complete request, headers and body (default 30 s). */
  readonly requestMs?: number | undefined;
  /** A socket with no byte in either direction (default 60 s). */
  readonly idleMs?: number | undefined;
  /** A kept-alive socket between requests (default 72 s: longer than common load balancers'). */
  readonly keepAliveMs?: number | undefined;
}

/** Longest path parameter the router reads: an MCP server id (up to 128 characters). */
const MAX_PARAM_LENGTH = 128;

export const DEFAULT_SERVER_TIMEOUTS = {
  headersMs: 10_000,
  requestMs: 30_000,
  idleMs: 60_000,
  keepAliveMs: 72_000,
} as const satisfies Required<ServerTimeouts>;

export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const timeouts = options.timeouts ?? {};
  const requestMs = timeouts.requestMs ?? DEFAULT_SERVER_TIMEOUTS.requestMs;
  const headersMs = Math.min(timeouts.headersMs ?? DEFAULT_SERVER_TIMEOUTS.headersMs, requestMs);
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: options.accessLog !== true }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    requestTimeout: requestMs,
    connectionTimeout: timeouts.idleMs ?? DEFAULT_SERVER_TIMEOUTS.idleMs,
    keepAliveTimeout: timeouts.keepAliveMs ?? DEFAULT_SERVER_TIMEOUTS.keepAliveMs,
    // Node checks the header and request deadlines on this period (its default is 30 s, which
    // let a slow request live up to twice its timeout).
    http: {
      headersTimeout: headersMs,
      requestTimeout: requestMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersMs / 4))),
    },
    return503OnClosing: true,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    forceCloseConnections: 'idle',
    // A body carrying `__proto__` or `constructor.prototype` keys is refused (400), never merged.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // A URL Fastify cannot decode (a path segment of invalid UTF-8, say) is answered in the one
    // error model, not with Fastify's own body.
    // So is a path parameter longer than the router reads (128 characters: every id we issue or
    // register is at most that long), which Fastify would answer with its own 414.
    frameworkErrors: (error, request, reply) => {
      let refused: GatewayError;
      if (error.code === 'FST_ERR_BAD_URL') {
        refused = invalidField('(url)', 'is not valid percent-encoded UTF-8');
      } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
        refused = invalidField(
          '(path)',
          `has a segment longer than ${MAX_PARAM_LENGTH} characters`,
        );
      } else refused = toGatewayError(error, request);
      sendError(reply, refused);
    },
  });
  closeConnectionsWhenIdle(app);
  // fastify-plugin wrapped: their handlers and decorations apply to the whole app.
  await app.register(errorsPlugin);
  await app.register(refusalsPlugin, { refusals: options.refusals });
  await app.register(healthPlugin, { readiness: options.readiness });
  if (options.metrics) await app.register(metricsPlugin, { metrics: options.metrics });
  return app;
}
