// Agents of the tenant: create, list (a relay connection), read one, and change role, allowed
// tools or persona. Spawning with credentials and the kill switch build on these records later.

import { SCOPES } from '../../../shared/identity/scopes.js';
import { createAgent, updateAgent } from '../../services/agents.js';
import { builder } from '../builder.js';
import { graphQLError, notFound } from '../errors.js';
import { auditOperatorAction, publishChange } from '../mutations.js';

builder.prismaObject('Agent', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    role: t.exposeString('role'),
    allowedTools: t.exposeStringList('allowedTools'),
    mcpAudiences: t.exposeStringList('mcpAudiences'),
    systemPrompt: t.exposeString('systemPrompt'),
    personaTone: t.exposeString('personaTone', { nullable: true }),
    personaLanguage: t.exposeString('personaLanguage', { nullable: true }),
    publicKey: t.exposeString('publicKey'),
    did: t.exposeString('did'),
    status: t.exposeString('status', { description: 'active or killed.' }),
    killedReason: t.exposeString('killedReason', { nullable: true }),
    killedAt: t.expose('killedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    parent: t.relation('parent', { nullable: true }),
  }),
});

builder.queryField('agents', (t) =>
  t.prismaConnection({
    type: 'Agent',
    cursor: 'id',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      role: t.arg.string(),
      status: t.arg.string({ description: 'active or killed.' }),
    },
    resolve: (query, _root, args, context) =>
      context.db.prisma.agent.findMany({
        ...query,
        where: {
          tenantId: context.caller.tenantId,
          ...(args.role ? { role: args.role } : {}),
          ...(args.status ? { status: args.status } : {}),
        },
        orderBy: { id: 'asc' },
      }),
  }),
);

builder.queryField('agent', (t) =>
  t.prismaField({
    type: 'Agent',
    nullable: true,
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, context) =>
      context.db.prisma.agent.findFirst({
        ...query,
        where: { id: String(args.id), tenantId: context.caller.tenantId },
      }),
  }),
);

const CreateAgentInput = builder.inputType('CreateAgentInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    publicKey: t.string({
      required: true,
      description: "The agent's Ed25519 public key (multibase); the kill switch addresses it.",
    }),
    role: t.string(),
    allowedTools: t.stringList({ required: true }),
    mcpAudiences: t.stringList({ description: 'mcp://{serverId} audiences.' }),
    systemPrompt: t.string(),
    personaTone: t.string(),
    personaLanguage: t.string(),
  }),
});

builder.mutationField('createAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: { input: t.arg({ type: CreateAgentInput, required: true }) },
    resolve: async (query, _root, { input }, context) => {
      if (input.publicKey.trim() === '' || input.publicKey.length > 512) {
        throw graphQLError('REQUEST_INVALID', 'publicKey must be 1-512 characters');
      }
      const { id } = await createAgent(context.db, {
        tenantId: context.caller.tenantId,
        name: input.name,
        publicKey: input.publicKey,
        allowedTools: input.allowedTools,
        ...(input.role ? { role: input.role } : {}),
        ...(input.mcpAudiences ? { mcpAudiences: input.mcpAudiences } : {}),
        ...(input.systemPrompt ? { systemPrompt: input.systemPrompt } : {}),
        personaTone: input.personaTone ?? null,
        personaLanguage: input.personaLanguage ?? null,
      });
      await auditOperatorAction(
        context,
        'agent.created',
        { type: 'agent', id },
        { name: input.name, role: input.role ?? 'agent' },
      );
      await publishChange(context);
      return context.db.prisma.agent.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);

const UpdateAgentInput = builder.inputType('UpdateAgentInput', {
  description: 'Fields to change; omitted fields keep their value.',
  fields: (t) => ({
    role: t.string(),
    allowedTools: t.stringList(),
    systemPrompt: t.string(),
    personaTone: t.string(),
    personaLanguage: t.string(),
  }),
});

builder.mutationField('updateAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      id: t.arg.id({ required: true }),
      input: t.arg({ type: UpdateAgentInput, required: true }),
    },
    resolve: async (query, _root, args, context) => {
      const id = String(args.id);
      const { input } = args;
      const patch = {
        ...(input.role != null ? { role: input.role } : {}),
        ...(input.allowedTools != null ? { allowedTools: input.allowedTools } : {}),
        ...(input.systemPrompt != null ? { systemPrompt: input.systemPrompt } : {}),
        ...(input.personaTone !== undefined ? { personaTone: input.personaTone } : {}),
        ...(input.personaLanguage !== undefined ? { personaLanguage: input.personaLanguage } : {}),
      };
      if (!(await updateAgent(context.db, context.caller.tenantId, id, patch))) {
        throw notFound('agent');
      }
      await auditOperatorAction(
        context,
        'agent.updated',
        { type: 'agent', id },
        { fields: Object.keys(patch) },
      );
      await publishChange(context);
      return context.db.prisma.agent.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);
