// POST /api/v1/public/compliance/validate/batch (DESIGN.md §9, docs/compliance-batch.md):
// unauthenticated, rate-limited per client IP, size-bounded, pure evaluation of NPL documents
// and bundled pins. Encapsulated: the rate limiter, the JSON-only body parsing and the custom
// body validator apply to this route alone. Cheap checks run in the order of their cost: rate
// limit (onRequest, before the body is read), body size, JSON parsing, the body's limits and
// schema (batch-body.ts), and only then policy parsing and evaluation.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError, gatewayError } from '../../../shared/errors/index.js';
import { batchResponseSchemas } from './batch-answer.js';
import {
  type ComplianceBatch,
  createBatchBodySchema,
  createBatchBodyValidator,
} from './batch-body.js';
import { type ComplianceLimits, DEFAULT_COMPLIANCE_LIMITS } from './limits.js';
import { toRouteSchema } from './route-schema.js';
import { createBatchValidator } from './validate-batch.js';

export const COMPLIANCE_BATCH_PATH = '/api/v1/public/compliance/validate/batch';
export const COMPLIANCE_BATCH_DOCS = 'docs/compliance-batch.md#request';

export interface CompliancePluginOptions {
  readonly rateLimit?: {
    /** Requests per client IP and window; default 60. */
    readonly max?: number;
    /** Window length in milliseconds; default 60 000. */
    readonly timeWindowMs?: number;
  };
  /** Overrides of DEFAULT_COMPLIANCE_LIMITS. */
  readonly limits?: Partial<ComplianceLimits>;
}

export const DEFAULT_RATE_LIMIT = Object.freeze({ max: 60, timeWindowMs: 60_000 });

/**
 * The rate-limit key: the socket's peer address. The data plane does not enable trustProxy, so
 * `X-Forwarded-For` cannot choose the key; behind a proxy, enable trustProxy there deliberately.
 */
export function rateLimitKey(request: Pick<FastifyRequest, 'ip'>): string {
  return request.ip;
}

function formatWindow(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.ceil(ms / 1000)} s`;
}

export async function compliancePlugin(
  app: FastifyInstance,
  options: CompliancePluginOptions,
): Promise<void> {
  const limits: ComplianceLimits = Object.freeze({
    ...DEFAULT_COMPLIANCE_LIMITS,
    ...options.limits,
  });
  const max = options.rateLimit?.max ?? DEFAULT_RATE_LIMIT.max;
  const timeWindowMs = options.rateLimit?.timeWindowMs ?? DEFAULT_RATE_LIMIT.timeWindowMs;
  const validateBatch = createBatchValidator(limits);

  // JSON only: Fastify's text/plain parser would hand the envelope check a string.
  app.removeContentTypeParser('text/plain');
  await app.register(rateLimit, {
    global: false,
    keyGenerator: rateLimitKey,
    errorResponseBuilder: (_request, context) =>
      gatewayError(
        'RATE_LIMITED',
        { max: context.max, window: formatWindow(timeWindowMs), retryAfter: context.after },
        { details: { retryAfterSeconds: Math.ceil(context.ttl / 1000) } },
      ),
  });

  app.post<{ Body: ComplianceBatch }>(
    COMPLIANCE_BATCH_PATH,
    {
      bodyLimit: limits.maxBodyBytes,
      config: { rateLimit: { max, timeWindow: timeWindowMs }, docs: COMPLIANCE_BATCH_DOCS },
      schema: {
        operationId: 'validateComplianceBatch',
        summary: 'Validate NPL documents and evaluate tool calls against them (no tenant data).',
        body: toRouteSchema(createBatchBodySchema(limits), 'input'),
        response: batchResponseSchemas,
      },
      // The body's JSON Schema documents the contract; the validator enforces the same zod
      // schema, with the limits first and without type coercion, and replaces the body by its
      // normalized form.
      validatorCompiler: createBatchBodyValidator(limits),
    },
    async (request) => {
      const result = validateBatch(request.body);
      if (result instanceof GatewayError) throw result;
      return result;
    },
  );
}
