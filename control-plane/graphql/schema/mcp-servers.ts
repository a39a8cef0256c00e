// MCP servers the tenant registers: where production calls are forwarded, over which transport,
// and the mock result per tool that simulation mode answers with. Addressed by serverId (the
// {serverId} of mcp://{serverId}), which is unique within the tenant. Registering or changing a
// server learns its tool definitions from the upstream's tools/list, waiting a bounded time
// (control-plane/tools/refresher.ts); the record shows what was learnt and why a refresh failed.

import { z } from 'zod';
import { SCOPES } from '../../../shared/identity/scopes.js';
import {
  readStoredAnnotations,
  readStoredDigests,
} from '../../../shared/tools/tool-definitions.js';
import {
  registerMcpServerAsOperator,
  removeMcpServer,
  SERVER_ID,
  SERVER_ID_PROBLEM,
  updateMcpServer,
} from '../../services/mcp-servers.js';
import { builder } from '../builder.js';
import { actorOf, type GraphQLContext } from '../context.js';
import { jsonObjectRule } from '../input-rules.js';
import { publishChange } from '../mutations.js';

const TRANSPORTS = { STREAMABLE_HTTP: 'streamable-http' } as const;

const McpTransport = builder.enumType('McpTransport', {
  description: 'How the gateway talks to an MCP server.',
  values: {
    STREAMABLE_HTTP: {
      value: TRANSPORTS.STREAMABLE_HTTP,
      description:
        "MCP's Streamable HTTP transport: JSON-RPC over HTTP POST, answers as JSON or SSE.",
    },
  } as const,
});

const SERVER_ID_DESCRIPTION =
  'The {serverId} of mcp://{serverId}: 1-128 letters, digits, `.`, `_` or `-`, ' +
  'starting with a letter or digit; unique in the tenant.';
const URL_DESCRIPTION = 'Absolute http(s) URL production calls are forwarded to.';
const MOCK_RESULTS_DESCRIPTION =
  'A JSON object: tool name -> the JSON-RPC result simulation mode answers with.';

builder.prismaObject('McpServer', {
  description: 'An MCP server of the tenant: where production calls to mcp://{serverId} go.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable id (UUID) of the registration.' }),
    serverId: t.exposeString('serverId', { description: SERVER_ID_DESCRIPTION }),
    url: t.exposeString('url', { description: URL_DESCRIPTION }),
    transport: t.field({
      type: McpTransport,
      description: 'How the gateway talks to it.',
      resolve: (server) => server.transport as (typeof TRANSPORTS)[keyof typeof TRANSPORTS],
    }),
    mockResults: t.expose('mockResults', {
      type: 'JSON',
      description: 'Tool name -> JSON-RPC result returned in simulation mode.',
    }),
    toolAnnotations: t.field({
      type: 'JSON',
      description:
        "Tool name -> the MCP annotations the server's tools/list declares (destructiveHint, " +
        'readOnlyHint, idempotentHint, openWorldHint, title). The destructive detector reads ' +
        'them; kept when a refresh fails.',
      resolve: (server) => readStoredAnnotations(server.toolAnnotations),
    }),
    toolDigests: t.field({
      type: 'JSON',
      description:
        'Tool name -> `sha256:<hex>`, the SHA-256 of the canonical JSON of the whole tool ' +
        'definition (description, schemas, annotations) as last listed.',
      resolve: (server) => readStoredDigests(server.toolAnnotations),
    }),
    toolsRefreshedAt: t.expose('toolsRefreshedAt', {
      type: 'DateTime',
      nullable: true,
      description:
        "When the server's tools/list was last learnt in full; null before the first time.",
    }),
    toolsRefreshError: t.exposeString('toolsRefreshError', {
      nullable: true,
      description:
        'Why the latest refresh of the tool definitions failed (registry code and message); ' +
        'null once a refresh succeeds. The definitions learnt before stay in force.',
    }),
    toolsRefreshFailedAt: t.expose('toolsRefreshFailedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the latest refresh failed; null once a refresh succeeds.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was registered.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
  }),
});

builder.queryField('mcpServers', (t) =>
  t.prismaField({
    type: ['McpServer'],
    description: "MCP servers of the caller's tenant, by serverId.",
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.mcpServer.findMany({
        ...query,
        where: { tenantId: context.caller.tenantId },
        orderBy: { serverId: 'asc' },
      }),
  }),
);

/** The validated map (jsonObjectRule ran on the input), typed as what it is. */
function mockResultsOf(value: unknown): Record<string, unknown> | undefined {
  return (value ?? undefined) as Record<string, unknown> | undefined;
}

const RegisterMcpServerInput = builder.inputType('RegisterMcpServerInput', {
  description: 'An MCP server to register, or to replace when its serverId is registered.',
  fields: (t) => ({
    serverId: t.string({
      required: true,
      description: SERVER_ID_DESCRIPTION,
      // Checked here too, so the refusal names the field (input.serverId) for forms.
      validate: z.string().regex(SERVER_ID, SERVER_ID_PROBLEM),
    }),
    url: t.string({ required: true, description: URL_DESCRIPTION }),
    transport: t.field({
      type: McpTransport,
      description: 'How to talk to it. Default: STREAMABLE_HTTP.',
    }),
    mockResults: t.field({
      type: 'JSON',
      description: `${MOCK_RESULTS_DESCRIPTION} Default: none.`,
      validate: jsonObjectRule,
    }),
  }),
});

async function findServer(context: GraphQLContext, query: object, serverId: string) {
  return context.db.prisma.mcpServer.findUniqueOrThrow({
    ...query,
    where: { tenantId_serverId: { tenantId: context.caller.tenantId, serverId } },
  });
}

builder.mutationField('registerMcpServer', (t) =>
  t.prismaField({
    type: 'McpServer',
    description:
      'Registers an MCP server of the tenant (replacing one with the same serverId). Agents ' +
      'reach it once the gateway policy trusts its serverId. Waits a bounded time (2 s by ' +
      "default) for the server's " +
      'tools/list and answers either way: a slow or unreachable server is learnt in the ' +
      'background (toolsRefreshedAt, toolsRefreshError). A URL whose address the egress policy ' +
      'forbids (its literal address, or what its host name resolves to now) is refused with ' +
      'UPSTREAM_ADDRESS_FORBIDDEN on input.url; nothing is stored or sent.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: {
      input: t.arg({ type: RegisterMcpServerInput, required: true, description: 'The server.' }),
    },
    resolve: async (query, _root, { input }, context) => {
      const mockResults = mockResultsOf(input.mockResults);
      await registerMcpServerAsOperator(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        serverId: input.serverId,
        url: input.url,
        ...(mockResults ? { mockResults } : {}),
      });
      await publishChange(context);
      await context.tools.refreshAfterChange(context.caller.tenantId, input.serverId);
      return findServer(context, query, input.serverId);
    },
  }),
);

const UpdateMcpServerInput = builder.inputType('UpdateMcpServerInput', {
  description: 'Fields to change; omitted fields keep their value.',
  fields: (t) => ({
    url: t.string({ description: URL_DESCRIPTION }),
    transport: t.field({ type: McpTransport, description: 'How to talk to it.' }),
    mockResults: t.field({
      type: 'JSON',
      description: `${MOCK_RESULTS_DESCRIPTION} Replaces the whole map.`,
      validate: jsonObjectRule,
    }),
  }),
});

builder.mutationField('updateMcpServer', (t) =>
  t.prismaField({
    type: 'McpServer',
    description:
      'Changes an MCP server of the tenant; NOT_FOUND when it has none with this id. Learns its ' +
      'tool definitions again, waiting as registerMcpServer does. A forbidden url is refused as ' +
      'registerMcpServer refuses it.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: {
      serverId: t.arg.string({ required: true, description: 'The McpServer.serverId.' }),
      input: t.arg({ type: UpdateMcpServerInput, required: true, description: 'What to change.' }),
    },
    resolve: async (query, _root, { serverId, input }, context) => {
      await updateMcpServer(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        serverId,
        // The input as given, in its order: the audit entry names the fields it sets.
        changes: { ...input, mockResults: mockResultsOf(input.mockResults) },
      });
      await publishChange(context);
      await context.tools.refreshAfterChange(context.caller.tenantId, serverId);
      return findServer(context, query, serverId);
    },
  }),
);

builder.mutationField('removeMcpServer', (t) =>
  t.boolean({
    description:
      'Removes an MCP server of the tenant; answers true, or NOT_FOUND when it has none with ' +
      'this id. Calls to it are denied from the next inspect on.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: { serverId: t.arg.string({ required: true, description: 'The McpServer.serverId.' }) },
    resolve: async (_root, { serverId }, context) => {
      await removeMcpServer(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        serverId,
      });
      await publishChange(context);
      return true;
    },
  }),
);
