// The control plane as one Fastify plugin: GraphQL (queries, mutations, subscriptions over
// graphql-ws), the operator console at /console, the management REST routes (credential issue, OAuth client registration, audit export) and, when the process feeds remote
// data planes, the configuration stream. The composition (runtime/) registers it on the shared
// HTTP edge and injects what it needs.
import type { FastifyInstance } from 'fastify';
import { consolePlugin } from './console/plugin.js';
import { type GraphQLPluginOptions, graphqlPlugin } from './graphql/server.js';
import { agentIdentityRoutes } from './routes/agent-identity.js';
import { agentsSpawnRoutes } from './routes/agents-spawn.js';
import { auditCheckpointRoutes } from './routes/audit-checkpoints.js';
import { auditExportRoutes } from './routes/audit-export.js';
import { credentialsIssueRoutes } from './routes/credentials-issue.js';
import { oauthRegisterRoutes } from './routes/oauth-register.js';
import type { ConfigStreamHub } from './stream/hub.js';
import { configStreamPlugin } from './stream/plugin.js';

export interface ControlPlaneDependencies extends GraphQLPluginOptions {
  /** The configuration stream to remote data planes; absent when the data plane is in-process. */
  readonly configStream?: ConfigStreamHub | undefined;
  /** The built operator console; default: web-console/dist of the installed package. */
  readonly consoleDir?: string | undefined;
}

export async function controlPlanePlugin(
  app: FastifyInstance,
  deps: ControlPlaneDependencies,
): Promise<void> {
  await app.register(graphqlPlugin, deps);
  await app.register(credentialsIssueRoutes, deps);
  await app.register(oauthRegisterRoutes, deps);
  await app.register(agentsSpawnRoutes, deps);
  await app.register(agentIdentityRoutes, deps);
  await app.register(auditExportRoutes, deps);
  await app.register(auditCheckpointRoutes, deps);
  await app.register(consolePlugin, { dir: deps.consoleDir });
  if (deps.configStream) {
    await app.register(configStreamPlugin, {
      db: deps.db,
      hub: deps.configStream,
      publicUrl: deps.publicUrl,
    });
  }
}
