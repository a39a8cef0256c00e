// MCP servers the tenant registers: where production calls are forwarded, over which transport,
// and the mock result per tool that simulation mode answers with. Addressed by serverId (the
// {serverId} of mcp://{serverId}), which is unique within the tenant.

import { SCOPES } from '../../../shared/identity/scopes.js';
import { registerMcpServer, removeMcpServer, updateMcpServer } from '../../services/mcp-servers.js';
import { builder } from '../builder.js';
import { graphQLError, notFound } from '../errors.js';
import { auditOperatorAction, publishChange } from '../mutations.js';

const TRANSPORTS = { STREAMABLE_HTTP: 'streamable-http' } as const;

const McpTransport = builder.enumType('McpTransport', {
  values: { STREAMABLE_HTTP: { value: TRANSPORTS.STREAMABLE_HTTP } } as const,
});

builder.prismaObject('McpServer', {
  fields: (t) => ({
    id: t.exposeID('id'),
    serverId: t.exposeString('serverId'),
    url: t.exposeString('url'),
    transport: t.field({
      type: McpTransport,
      resolve: (server) => server.transport as (typeof TRANSPORTS)[keyof typeof TRANSPORTS],
    }),
    mockResults: t.expose('mockResults', {
      type: 'JSON',
      description: 'Tool name -> JSON-RPC result returned in simulation mode.',
    }),
    toolAnnotations: t.expose('toolAnnotations', { type: 'JSON' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.queryField('mcpServers', (t) =>
  t.prismaField({
    type: ['McpServer'],
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.mcpServer.findMany({
        ...query,
        where: { tenantId: context.caller.tenantId },
        orderBy: { serverId: 'asc' },
      }),
  }),
);

function mockResultsOf(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw graphQLError('REQUEST_INVALID', 'mockResults must be an object of tool name -> result');
  }
  return value as Record<string, unknown>;
}

const RegisterMcpServerInput = builder.inputType('RegisterMcpServerInput', {
  fields: (t) => ({
    serverId: t.string({ required: true }),
    url: t.string({ required: true }),
    transport: t.field({ type: McpTransport }),
    mockResults: t.field({ type: 'JSON' }),
  }),
});

async function findServer(
  context: Parameters<typeof publishChange>[0],
  query: object,
  serverId: string,
) {
  return context.db.prisma.mcpServer.findUniqueOrThrow({
    ...query,
    where: { tenantId_serverId: { tenantId: context.caller.tenantId, serverId } },
  });
}

builder.mutationField('registerMcpServer', (t) =>
  t.prismaField({
    type: 'McpServer',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: { input: t.arg({ type: RegisterMcpServerInput, required: true }) },
    resolve: async (query, _root, { input }, context) => {
      const mockResults = mockResultsOf(input.mockResults);
      const { id } = await registerMcpServer(context.db, {
        tenantId: context.caller.tenantId,
        serverId: input.serverId,
        url: input.url,
        ...(mockResults ? { mockResults } : {}),
      });
      await auditOperatorAction(
        context,
        'mcp_server.registered',
        { type: 'mcp_server', id },
        { serverId: input.serverId, url: input.url },
      );
      await publishChange(context);
      return findServer(context, query, input.serverId);
    },
  }),
);

const UpdateMcpServerInput = builder.inputType('UpdateMcpServerInput', {
  fields: (t) => ({
    url: t.string(),
    transport: t.field({ type: McpTransport }),
    mockResults: t.field({ type: 'JSON', description: 'Replaces the whole map.' }),
  }),
});

builder.mutationField('updateMcpServer', (t) =>
  t.prismaField({
    type: 'McpServer',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: {
      serverId: t.arg.string({ required: true }),
      input: t.arg({ type: UpdateMcpServerInput, required: true }),
    },
    resolve: async (query, _root, { serverId, input }, context) => {
      const mockResults = mockResultsOf(input.mockResults);
      const updated = await updateMcpServer(context.db, context.caller.tenantId, serverId, {
        ...(input.url ? { url: input.url } : {}),
        ...(input.transport ? { transport: input.transport } : {}),
        ...(mockResults ? { mockResults } : {}),
      });
      if (!updated) throw notFound('MCP server');
      await auditOperatorAction(
        context,
        'mcp_server.updated',
        { type: 'mcp_server', id: serverId },
        { serverId, fields: Object.keys(input).filter((key) => input[key as 'url'] != null) },
      );
      await publishChange(context);
      return findServer(context, query, serverId);
    },
  }),
);

builder.mutationField('removeMcpServer', (t) =>
  t.boolean({
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: { serverId: t.arg.string({ required: true }) },
    resolve: async (_root, { serverId }, context) => {
      if (!(await removeMcpServer(context.db, context.caller.tenantId, serverId))) {
        throw notFound('MCP server');
      }
      await auditOperatorAction(
        context,
        'mcp_server.removed',
        { type: 'mcp_server', id: serverId },
        { serverId },
      );
      await publishChange(context);
      return true;
    },
  }),
);
