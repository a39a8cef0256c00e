// GET /metrics: a process's Prometheus registry in the text exposition format. The edge serves
// whatever registry the composition hands it (the metrics themselves are defined where they are
// observed: data-plane/metrics/gateway-metrics.ts); one registry per app, since tests build many
// apps in one process.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Registry } from 'prom-client';

/** What /metrics serves. */
export interface ServedMetrics {
  readonly registry: Registry;
}

export const metricsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { metrics: ServedMetrics }) => {
    const { registry } = options.metrics;
    const schema = {
      operationId: 'getMetrics',
      summary: 'Prometheus metrics of this process (text exposition format).',
    };
    app.get('/metrics', { logLevel: 'warn', schema }, async (_request, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'agent-gateway-metrics' },
);
