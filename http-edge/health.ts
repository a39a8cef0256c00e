// Liveness and readiness. /healthz answers 200 while the process serves HTTP at all; /readyz
// answers 200 only once the gateway can do its job (migrations applied, configuration loaded)
// and 503 again while it drains on shutdown, so a load balancer stops sending traffic first. A
// process can also be out of service however ready it is: `condition` (a remote data plane's revocation or
// stale snapshot, docs/config-push.md) is asked on every /readyz and answers 503 with its reason.
import type { FastifyInstance } from 'fastify';

export interface Readiness {
  ready: boolean;
  /** Why the gateway is not ready (for /readyz and logs). */
  reason: string;
  /** Why the process is out of service whatever `ready` says (asked on every /readyz), or undefined. */
  condition: (() => string | undefined) | undefined;
}

export function createReadiness(): Readiness {
  return { ready: false, reason: 'starting', condition: undefined };
}

export async function healthPlugin(
  app: FastifyInstance,
  options: { readiness: Readiness },
): Promise<void> {
  const { readiness } = options;
  const statusSchema = {
    type: 'object',
    properties: { status: { type: 'string' }, reason: { type: 'string' } },
    required: ['status'],
  } as const;
  app.get(
    '/healthz',
    {
      logLevel: 'warn',
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness: 200 while the process serves HTTP at all.',
        response: { 200: statusSchema },
      },
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: 200 once migrated and configured, 503 (with the reason) otherwise.',
        response: { 200: statusSchema, 503: statusSchema },
      },
    },
    async (_request, reply) => {
      const reason = readiness.condition?.() ?? (readiness.ready ? undefined : readiness.reason);
      if (reason === undefined) return { status: 'ready' };
      return reply.code(503).send({ status: 'not_ready', reason });
    },
  );
}
