// Prometheus metrics of the data plane, served at /metrics in the text exposition format. One
// registry per app (tests build many apps in one process). Label values come from closed sets
// (decisions, registry codes, outcomes), never from request data, so cardinality stays bounded.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface GatewayMetrics {
  readonly registry: Registry;
  readonly inspectDuration: Histogram<'decision' | 'reason_code' | 'mode'>;
  readonly upstreamDuration: Histogram<'outcome'>;
  readonly auditFlushDuration: Histogram;
  readonly auditFlushEntries: Counter;
  readonly snapshotVersion: Gauge;
  readonly snapshotApplied: Counter<'result'>;
}

const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

export function createGatewayMetrics(options: { defaultMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    inspectDuration: new Histogram({
      name: 'agent_gateway_inspect_duration_seconds',
      help: 'Time to answer an inspect request, by decision, reason code and mode.',
      labelNames: ['decision', 'reason_code', 'mode'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    upstreamDuration: new Histogram({
      name: 'agent_gateway_upstream_duration_seconds',
      help: 'Time of forwards to upstream MCP servers, by outcome.',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    auditFlushDuration: new Histogram({
      name: 'agent_gateway_audit_flush_duration_seconds',
      help: 'Time of one group commit of the audit trail.',
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    auditFlushEntries: new Counter({
      name: 'agent_gateway_audit_entries_total',
      help: 'Audit entries committed.',
      registers: [registry],
    }),
    snapshotVersion: new Gauge({
      name: 'agent_gateway_snapshot_version',
      help: 'Version of the configuration snapshot in use.',
      registers: [registry],
    }),
    snapshotApplied: new Counter({
      name: 'agent_gateway_snapshot_applies_total',
      help: 'Configuration snapshots received, by result (applied, rejected).',
      labelNames: ['result'],
      registers: [registry],
    }),
  };
}

export const metricsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { metrics: GatewayMetrics }) => {
    const { registry } = options.metrics;
    app.get('/metrics', { logLevel: 'warn' }, async (_request, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'agent-gateway-metrics' },
);
