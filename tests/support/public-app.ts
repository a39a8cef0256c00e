// The data plane's public surface alone, for tests and benchmarks of the compliance route: the
// shared HTTP edge with the compliance plugin, no database, no snapshot.
import type { FastifyInstance } from 'fastify';
import {
  type CompliancePluginOptions,
  compliancePlugin,
} from '../../data-plane/routes/compliance/index.js';
import { buildServer, type ServerOptions } from '../../http-edge/server.js';

export async function buildPublicApp(
  options: ServerOptions & { compliance?: CompliancePluginOptions | undefined },
): Promise<FastifyInstance> {
  const app = await buildServer(options);
  await app.register(compliancePlugin, options.compliance ?? {});
  return app;
}
