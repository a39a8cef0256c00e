// Agents of the tenant: create, list (a relay connection), read one, and change role, allowed
// tools or persona. Spawning with credentials and the kill switch build on these records later.

import {
  AGENT_AUDIENCES_MAX,
  AGENT_NAME_MAX,
  AGENT_ROLE_MAX,
  AGENT_TOOL_NAME_MAX,
  AGENT_TOOLS_MAX,
  CREATE_AGENT_RULES,
  UPDATE_AGENT_RULES,
} from '../../../shared/agents/agent-rules.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import {
  createAgentAsOperator,
  requireExecutionMode,
  requireRegisteredAudiences,
  updateAgentAsOperator,
} from '../../services/agents.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';
import { publishChange } from '../mutations.js';

/**
 * The fields of an agent's configuration: what it is told (system prompt, persona), what it may
 * do (allowed tools, audiences, execution mode) and, in agentiam.ts, its credentials. A key
 * reaches an agent through other objects too (an approval, an OAuth client, an agent event), and
 * the scope of the root field (an auditor's audit:read, say) is not agents:manage, so each of these
 * fields checks agents:manage itself: without it the field answers null with an
 * AUTH_INSUFFICIENT_SCOPE error at its path, and the rest of the answer stands (GraphQL partial
 * data). Who the agent is (id, name, role, did, public key, status, dates) and its kill stay
 * readable to every key that reaches it.
 */
export const AGENT_CONFIGURATION = {
  authScopes: { scope: SCOPES.AGENTS_MANAGE },
  nullable: true,
} as const;

/** The end of the description of every AGENT_CONFIGURATION field. */
export const NEEDS_MANAGE = ` Needs ${SCOPES.AGENTS_MANAGE}: null with AUTH_INSUFFICIENT_SCOPE otherwise.`;

const EXECUTION_MODE_DESCRIPTION =
  'Execution mode of its MCP proxy calls: production, simulation or shadow; null: the ' +
  "tenant's proxyExecutionMode.";

builder.prismaObject('Agent', {
  description:
    'A governed AI agent of the tenant: what it may call (allowedTools, mcpAudiences), its ' +
    'persona, and its public key, by which the kill switch addresses it. Every key that reaches ' +
    'an agent (an auditor through an approval, say) reads who it is and whether it was killed; ' +
    `its configuration needs ${SCOPES.AGENTS_MANAGE}.`,
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable id (UUID); the agentId of inspect calls.' }),
    name: t.exposeString('name', { description: 'Name shown to operators; not unique.' }),
    role: t.exposeString('role', {
      description: 'Role that NPL rules can match (`agent.role`); `agent` unless set.',
    }),
    allowedTools: t.exposeStringList('allowedTools', {
      ...AGENT_CONFIGURATION,
      description: `Tool names (exact, or \`*\` globs) this agent may call; inspect refuses any other.${NEEDS_MANAGE}`,
    }),
    mcpAudiences: t.exposeStringList('mcpAudiences', {
      ...AGENT_CONFIGURATION,
      description: `MCP servers it may obtain tokens for, each as mcp://{serverId}.${NEEDS_MANAGE}`,
    }),
    systemPrompt: t.exposeString('systemPrompt', {
      ...AGENT_CONFIGURATION,
      description: `System prompt given to the agent when it is spawned (empty when unset).${NEEDS_MANAGE}`,
    }),
    personaTone: t.exposeString('personaTone', {
      ...AGENT_CONFIGURATION,
      description: `Tone of voice of the persona (free text, e.g. terse), or null when unset.${NEEDS_MANAGE}`,
    }),
    personaLanguage: t.exposeString('personaLanguage', {
      ...AGENT_CONFIGURATION,
      description: `Language the persona answers in (free text, e.g. en or French), or null when unset.${NEEDS_MANAGE}`,
    }),
    publicKey: t.exposeString('publicKey', {
      description:
        'Ed25519 public key, multibase base58btc (`z6Mk…`, as in did:key); unique in the tenant (other tenants may hold the same key).',
    }),
    did: t.exposeString('did', {
      description:
        'Decentralized identifier of the agent: the did:key of its public key (did:key:z6Mk…), the subject of its identity credentials.',
    }),
    status: t.exposeString('status', {
      description: 'Either active or killed; a killed agent is refused on every inspect.',
    }),
    executionMode: t.exposeString('executionMode', {
      ...AGENT_CONFIGURATION,
      description: `${EXECUTION_MODE_DESCRIPTION}${NEEDS_MANAGE}`,
    }),
    killedReason: t.exposeString('killedReason', {
      nullable: true,
      description: 'Why the agent was killed, as the operator gave it; null while active.',
    }),
    killedAt: t.expose('killedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the agent was killed; null while active.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      description: 'When its record last changed.',
    }),
    parent: t.relation('parent', {
      nullable: true,
      description: 'The agent that spawned this one, or null for an agent created directly.',
    }),
  }),
});

builder.queryField('agents', (t) =>
  t.prismaConnection({
    type: 'Agent',
    cursor: 'id',
    description: "Agents of the caller's tenant, ordered by id; at most 100 per page.",
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      role: t.arg.string({ description: 'Only agents with exactly this role.' }),
      status: t.arg.string({ description: 'Only agents in this status: active or killed.' }),
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
    description:
      "One agent of the caller's tenant; null when the tenant has no agent with this id.",
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: { id: t.arg.id({ required: true, description: 'The Agent.id.' }) },
    resolve: (query, _root, args, context) =>
      context.db.prisma.agent.findFirst({
        ...query,
        where: { id: String(args.id), tenantId: context.caller.tenantId },
      }),
  }),
);

const ROLE_DESCRIPTION = `Role that NPL rules can match, 1-${AGENT_ROLE_MAX} characters.`;
const TOOLS_DESCRIPTION = `Tool names (exact, or \`*\` globs) the agent may call: at most ${AGENT_TOOLS_MAX}, each 1-${AGENT_TOOL_NAME_MAX} characters.`;

const CreateAgentInput = builder.inputType('CreateAgentInput', {
  description: 'A new agent of the tenant.',
  validate: CREATE_AGENT_RULES,
  fields: (t) => ({
    name: t.string({
      required: true,
      description: `Name shown to operators, 1-${AGENT_NAME_MAX} characters.`,
    }),
    publicKey: t.string({
      required: true,
      description:
        "The agent's Ed25519 public key as multibase base58btc of the ed25519-pub multicodec " +
        '(`z6Mk…`, the method-specific id of a did:key); unique in the tenant (other tenants may hold the same key).',
    }),
    role: t.string({
      description: `${ROLE_DESCRIPTION} Default: agent.`,
    }),
    allowedTools: t.stringList({
      required: true,
      description: TOOLS_DESCRIPTION,
    }),
    mcpAudiences: t.stringList({
      description: `MCP servers it may obtain tokens for, each as mcp://{serverId} of a server registered in the tenant: at most ${AGENT_AUDIENCES_MAX}. Default: none.`,
    }),
    systemPrompt: t.string({ description: 'System prompt given to the agent. Default: empty.' }),
    personaTone: t.string({ description: 'Tone of voice of the persona (free text).' }),
    personaLanguage: t.string({ description: 'Language the persona answers in (free text).' }),
    executionMode: t.string({ description: `${EXECUTION_MODE_DESCRIPTION} Default: null.` }),
  }),
});

builder.mutationField('createAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    description: 'Creates an agent; the data plane knows it from the next inspect on.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      input: t.arg({ type: CreateAgentInput, required: true, description: 'The new agent.' }),
    },
    resolve: async (query, _root, { input }, context) => {
      await requireRegisteredAudiences(
        context.db,
        context.caller.tenantId,
        input.mcpAudiences ?? [],
        'input.mcpAudiences',
      );
      const { id } = await createAgentAsOperator(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        name: input.name,
        publicKey: input.publicKey,
        allowedTools: input.allowedTools,
        ...(input.role ? { role: input.role } : {}),
        ...(input.mcpAudiences ? { mcpAudiences: input.mcpAudiences } : {}),
        ...(input.systemPrompt ? { systemPrompt: input.systemPrompt } : {}),
        personaTone: input.personaTone ?? null,
        personaLanguage: input.personaLanguage ?? null,
        executionMode: requireExecutionMode(input.executionMode, 'input.executionMode') ?? null,
      });
      await publishChange(context);
      return context.db.prisma.agent.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);

const UpdateAgentInput = builder.inputType('UpdateAgentInput', {
  description: 'Fields to change; omitted fields keep their value.',
  validate: UPDATE_AGENT_RULES,
  fields: (t) => ({
    role: t.string({ description: ROLE_DESCRIPTION }),
    allowedTools: t.stringList({
      description: `${TOOLS_DESCRIPTION} Replaces the whole list.`,
    }),
    systemPrompt: t.string({ description: 'System prompt given to the agent.' }),
    personaTone: t.string({
      description: 'Tone of voice of the persona (free text); null clears it.',
    }),
    personaLanguage: t.string({
      description: 'Language the persona answers in (free text); null clears it.',
    }),
    executionMode: t.string({ description: `${EXECUTION_MODE_DESCRIPTION} null clears it.` }),
  }),
});

builder.mutationField('updateAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    description:
      'Changes role, allowed tools, system prompt, persona or execution mode of an agent of ' +
      'the tenant; ' +
      'NOT_FOUND when the tenant has no such agent.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      id: t.arg.id({ required: true, description: 'The Agent.id.' }),
      input: t.arg({ type: UpdateAgentInput, required: true, description: 'What to change.' }),
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
        ...(input.executionMode !== undefined
          ? { executionMode: requireExecutionMode(input.executionMode, 'input.executionMode') }
          : {}),
      };
      await updateAgentAsOperator(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        id,
        patch,
      });
      await publishChange(context);
      return context.db.prisma.agent.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);
