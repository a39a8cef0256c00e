// Tool-definition pinning for operators (docs/tool-pinning.md): the pins of the tenant's MCP
// servers (toolDefinitions), the held ones with what changed (toolDefinitionChanges), the
// approval of a reviewed definition (approveToolDefinition: audited, published before it
// answers) and the toolDefinitionEvents subscription (changes noticed, approvals made). Always
// inside the tenant of the caller's key.
import { EVENT_TYPES, mapEvents } from '../../../shared/events/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import {
  approveToolDefinition,
  listToolDefinitions,
  type ToolDefinitionRecord,
} from '../../services/tool-definitions.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';

const ToolDefinitionStatusEnum = builder.enumType('ToolDefinitionStatus', {
  description: "A pinned tool's definition compared with the approved one.",
  values: {
    APPROVED: { value: 'approved', description: 'The upstream lists the approved definition.' },
    CHANGED: {
      value: 'changed',
      description: 'The upstream lists another definition than the approved one: held.',
    },
    NOT_APPROVED: {
      value: 'not_approved',
      description: 'Never approved: held when the tenant pins in approved_only mode.',
    },
  } as const,
});

const ToolDefinitionRef = builder.objectRef<ToolDefinitionRecord>('ToolDefinition').implement({
  description:
    'The pinned definition of one upstream tool: the approved one (or the first one seen, ' +
    'under toolPinning first_sight) and the one the upstream listed last. A held tool is ' +
    "hidden from the MCP proxy's tools/list and its calls are denied until approved.",
  fields: (t) => ({
    serverId: t.exposeString('serverId', { description: 'The McpServer.serverId.' }),
    toolName: t.exposeString('toolName', { description: 'The tool’s name.' }),
    status: t.field({
      type: ToolDefinitionStatusEnum,
      description: 'Approved, changed or never approved.',
      resolve: (pin) => pin.status,
    }),
    held: t.exposeBoolean('held', {
      description: "Whether calls are denied under the tenant's toolPinning mode.",
    }),
    approvedDigest: t.exposeString('approvedDigest', {
      nullable: true,
      description: '`sha256:<hex>` of the approved definition; null when never approved.',
    }),
    approvedDefinition: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The approved definition as the upstream listed it; null when never approved.',
      resolve: (pin) => pin.approvedDefinition ?? null,
    }),
    approvedAt: t.expose('approvedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it was approved (or first seen, under first_sight).',
    }),
    approvedBy: t.exposeString('approvedBy', {
      nullable: true,
      description: 'Who approved: first_sight, or the approving operator as api_key:{id}.',
    }),
    observedDigest: t.exposeString('observedDigest', {
      description:
        '`sha256:<hex>` of the definition listed last: what approveToolDefinition takes.',
    }),
    observedDefinition: t.field({
      type: 'JSON',
      description: 'The definition the upstream listed last.',
      resolve: (pin) => pin.observedDefinition,
    }),
    observedAt: t.expose('observedAt', {
      type: 'DateTime',
      description: 'When that definition was first listed.',
    }),
    changedFields: t.exposeStringList('changedFields', {
      description:
        'Top-level fields of the definition (description, inputSchema, annotations…) that ' +
        'differ from the approved one; empty unless CHANGED.',
    }),
  }),
});

builder.queryField('toolDefinitions', (t) =>
  t.field({
    type: [ToolDefinitionRef],
    description: "Every pinned tool of one of the tenant's MCP servers, by tool name.",
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: { serverId: t.arg.string({ required: true, description: 'The McpServer.serverId.' }) },
    resolve: (_root, { serverId }, context) =>
      listToolDefinitions(context.db, context.caller.tenantId, { serverId }),
  }),
);

builder.queryField('toolDefinitionChanges', (t) =>
  t.field({
    type: [ToolDefinitionRef],
    description:
      'Held tools of the tenant (of one server when serverId is given): definitions that ' +
      'changed since approval, and, under approved_only, those never approved. Review ' +
      'observedDefinition against approvedDefinition, then approveToolDefinition.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: { serverId: t.arg.string({ description: 'Only this McpServer.serverId.' }) },
    resolve: (_root, { serverId }, context) =>
      listToolDefinitions(context.db, context.caller.tenantId, {
        heldOnly: true,
        ...(serverId == null ? {} : { serverId }),
      }),
  }),
);

const ApproveToolDefinitionInput = builder.inputType('ApproveToolDefinitionInput', {
  description: 'The reviewed definition to approve.',
  fields: (t) => ({
    serverId: t.string({ required: true, description: 'The McpServer.serverId.' }),
    toolName: t.string({ required: true, description: 'The tool’s name.' }),
    digest: t.string({
      required: true,
      description:
        'The observedDigest that was reviewed: the approval applies only while it is still ' +
        'the observed one (REQUEST_INVALID names the current one otherwise).',
    }),
  }),
});

builder.mutationField('approveToolDefinition', (t) =>
  t.field({
    type: ToolDefinitionRef,
    description:
      'Approves the observed definition of a tool: it becomes the pinned one and the tool is ' +
      'callable again from the next call on. Audited as tool_definition.approved.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: {
      input: t.arg({ type: ApproveToolDefinitionInput, required: true, description: 'What.' }),
    },
    // The service publishes, then announces (control-plane/services/tool-definitions.ts).
    resolve: (_root, { input }, context) =>
      approveToolDefinition(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        serverId: input.serverId,
        toolName: input.toolName,
        digest: input.digest,
      }),
  }),
);

const ToolDefinitionChangeEnum = builder.enumType('ToolDefinitionChange', {
  description: 'What happened to a pinned tool definition.',
  values: {
    CHANGED: {
      value: 'changed',
      description: 'The upstream listed a definition that is not approved: the tool is held.',
    },
    APPROVED: { value: 'approved', description: 'An operator approved a definition.' },
  } as const,
});

interface ToolDefinitionEventShape {
  readonly change: 'changed' | 'approved';
  readonly serverId: string;
  readonly toolName: string;
}

const ToolDefinitionEventRef = builder
  .objectRef<ToolDefinitionEventShape>('ToolDefinitionEvent')
  .implement({
    description: 'A tool definition of the tenant changed upstream or was approved.',
    fields: (t) => ({
      change: t.field({
        type: ToolDefinitionChangeEnum,
        description: 'Changed or approved.',
        resolve: (event) => event.change,
      }),
      serverId: t.exposeString('serverId', { description: 'The McpServer.serverId.' }),
      toolName: t.exposeString('toolName', { description: 'The tool’s name.' }),
      definition: t.field({
        type: ToolDefinitionRef,
        nullable: true,
        description: 'The pin as it is when the event is delivered.',
        resolve: async (event, _args, context) =>
          (
            await listToolDefinitions(context.db, context.caller.tenantId, {
              serverId: event.serverId,
            })
          ).find((pin) => pin.toolName === event.toolName) ?? null,
      }),
    }),
  });

builder.subscriptionField('toolDefinitionEvents', (t) =>
  t.field({
    type: ToolDefinitionEventRef,
    description:
      "Tool definitions of the caller's tenant as upstreams change them and operators " +
      'approve them.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: { serverId: t.arg.string({ description: 'Only this McpServer.serverId.' }) },
    subscribe: (_root, args, context) => {
      const tenantId = context.caller.tenantId;
      const serverId = args.serverId ?? null;
      return mapEvents(
        context.events.subscribe(
          (event) =>
            (event.type === EVENT_TYPES.TOOL_DEFINITION_CHANGED ||
              event.type === EVENT_TYPES.TOOL_DEFINITION_APPROVED) &&
            event.tenantId === tenantId &&
            (serverId === null || event.serverId === serverId),
        ),
        (event): ToolDefinitionEventShape | undefined =>
          event.type === EVENT_TYPES.TOOL_DEFINITION_CHANGED ||
          event.type === EVENT_TYPES.TOOL_DEFINITION_APPROVED
            ? {
                change: event.type === EVENT_TYPES.TOOL_DEFINITION_CHANGED ? 'changed' : 'approved',
                serverId: event.serverId,
                toolName: event.toolName,
              }
            : undefined,
      );
    },
    resolve: (event) => event,
  }),
);
