// The MCP proxy endpoint (issue 14, DESIGN.md §6b): `/mcp/{serverId}` speaks MCP Streamable HTTP
// to unmodified MCP clients (transport/), and `/.well-known/oauth-protected-resource/mcp/{serverId}`
// (RFC 9728) tells them which authorization server issues tokens for it, so a client that starts
// from a 401 finds its way to our token endpoint by itself. Encapsulated: its error handler and
// JSON parsing are its own. Closing the app first ends what would hold its close for ever: held
// calls answer APPROVAL_PENDING with their approval id (the client retries the same call after
// the restart and resumes that approval) and GET streams end; calls being forwarded finish; then
// every proxy session (and its upstream session) closes.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { proxyResource } from './auth.js';
import type { McpProxyDependencies } from './dependencies.js';
import { McpProxy } from './proxy.js';
import { registerStreamableHttp } from './transport/streamable-http.js';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource/mcp/:serverId';

export const mcpProxyRoutes = fastifyPlugin(registerMcpProxy, {
  name: 'agent-gateway-mcp-proxy',
  dependencies: ['agent-gateway-errors', 'agent-gateway-auth'],
  encapsulate: true,
});

async function registerMcpProxy(app: FastifyInstance, deps: McpProxyDependencies): Promise<void> {
  const stopping = new AbortController();
  app.addHook('preClose', async () => {
    stopping.abort();
    deps.sessions.endServerStreams();
  });
  const proxy = new McpProxy(deps, stopping.signal);
  app.get(
    PROTECTED_RESOURCE_PATH,
    {
      schema: {
        operationId: 'mcpProxyResourceMetadata',
        summary: 'OAuth protected resource metadata (RFC 9728) of a server’s MCP proxy endpoint.',
        params: {
          type: 'object',
          properties: { serverId: { type: 'string', maxLength: 128 } },
          required: ['serverId'],
        },
        response: {
          200: {
            description: 'RFC 9728 protected resource metadata.',
            type: 'object',
            properties: {
              resource: { type: 'string' },
              authorization_servers: { type: 'array', items: { type: 'string' } },
              bearer_methods_supported: { type: 'array', items: { type: 'string' } },
              resource_name: { type: 'string' },
            },
          },
        },
      },
    },
    (request, reply) => {
      const issuer = deps.auth.issuer();
      const { serverId } = request.params as { serverId: string };
      return reply.header('cache-control', 'public, max-age=300').send({
        resource: proxyResource(issuer, serverId),
        authorization_servers: [issuer],
        bearer_methods_supported: ['header'],
        resource_name: `MCP server ${serverId} through Agent Gateway`,
      });
    },
  );
  await app.register(async (scope) => registerStreamableHttp(scope, proxy));
  app.addHook('onClose', async () => {
    deps.sessions.closeAll();
  });
}
