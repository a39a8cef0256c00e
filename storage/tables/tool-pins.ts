// Tool-definition pins (ToolDefinitionPin, docs/tool-pinning.md) as the writers of learnt tool
// definitions see them: each listed tool is observed against its pin inside the caller's
// transaction (storage/tables/tool-definitions.ts). No pin: one is made, approved on first sight under
// toolPinning first_sight, unapproved under approved_only. A pin: its observed definition follows
// what was listed (a revert to the approved definition clears the hold). What the write made
// held is returned, once per change of definition, so the callers audit and publish each change
// once however often it is listed.
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../prisma/generated/client/client.js';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { EVENT_TYPES, type EventBus } from '../../shared/events/index.js';
import { asTenantId } from '../../shared/ids.js';
import type { ListedTool } from '../../shared/tools/tool-definitions.js';
import { toolDefinitionDigest } from '../../shared/tools/tool-definitions.js';
import {
  DEFAULT_TOOL_PINNING,
  isToolPinningMode,
  pinVerdict,
  type ToolPinningMode,
} from '../../shared/tools/tool-pins.js';
import type { AuditWriter } from './audit-writer.js';

/** A tool that became held in a write (or, held already, changed its definition again). */
export interface HeldToolChange {
  readonly toolName: string;
  /** null: never approved (approved_only). */
  readonly approvedDigest: string | null;
  readonly observedDigest: string;
}

export interface ObservedToolPins {
  /** Whether any pin was made or changed (the tenant's configVersion must be bumped). */
  readonly changed: boolean;
  readonly held: readonly HeldToolChange[];
}

/** The tenant's pinning mode (first_sight when it has no gateway policy row). */
export async function readToolPinningMode(
  tx: Prisma.TransactionClient,
  tenantId: string,
): Promise<ToolPinningMode> {
  const policy = await tx.gatewayPolicy.findUnique({
    where: { tenantId },
    select: { toolPinning: true },
  });
  return isToolPinningMode(policy?.toolPinning) ? policy.toolPinning : DEFAULT_TOOL_PINNING;
}

/** Observes each listed tool against its pin; run inside the transaction that stores them. */
export async function observeToolPins(
  tx: Prisma.TransactionClient,
  input: {
    readonly tenantId: string;
    readonly serverId: string;
    readonly tools: readonly ListedTool[];
    readonly at: Date;
  },
): Promise<ObservedToolPins> {
  const { tenantId, serverId, at } = input;
  if (input.tools.length === 0) return { changed: false, held: [] };
  const listed = new Map<string, ListedTool>();
  for (const tool of input.tools) listed.set(tool.name, tool);
  const [mode, pins] = await Promise.all([
    readToolPinningMode(tx, tenantId),
    tx.toolDefinitionPin.findMany({
      where: { tenantId, serverId, toolName: { in: [...listed.keys()] } },
      select: { id: true, toolName: true, approvedDigest: true, observedDigest: true },
    }),
  ]);
  const pinOf = new Map(pins.map((pin) => [pin.toolName, pin]));
  const held: HeldToolChange[] = [];
  const created: Prisma.ToolDefinitionPinCreateManyInput[] = [];
  let changed = false;
  for (const [toolName, tool] of listed) {
    const digest = toolDefinitionDigest(tool.definition);
    const definition = tool.definition as Prisma.InputJsonObject;
    const pin = pinOf.get(toolName);
    if (pin === undefined) {
      const approved = mode === 'first_sight';
      created.push({
        id: randomUUID(),
        tenantId,
        serverId,
        toolName,
        approvedDigest: approved ? digest : null,
        ...(approved ? { approvedDefinition: definition, approvedAt: at } : {}),
        approvedBy: approved ? 'first_sight' : null,
        observedDigest: digest,
        observedDefinition: definition,
        observedAt: at,
      });
      if (!approved) held.push({ toolName, approvedDigest: null, observedDigest: digest });
      continue;
    }
    if (pin.observedDigest === digest) continue;
    await tx.toolDefinitionPin.update({
      where: { id: pin.id },
      data: { observedDigest: digest, observedDefinition: definition, observedAt: at },
    });
    changed = true;
    if (pinVerdict({ approved: pin.approvedDigest, observed: digest }, mode) !== undefined) {
      held.push({ toolName, approvedDigest: pin.approvedDigest, observedDigest: digest });
    }
  }
  if (created.length > 0) {
    // A concurrent writer may have pinned the same tool first: its pin stands.
    await tx.toolDefinitionPin.createMany({ data: created, skipDuplicates: true });
    changed = true;
  }
  return { changed, held };
}

/**
 * Audits and publishes each tool a write made held (tool_definition.changed). The data plane's
 * pass-through recorder and the control plane's refresher share it: the same entry whichever
 * plane noticed the change.
 */
export async function reportHeldTools(
  sinks: {
    readonly audit?: Pick<AuditWriter, 'append'>;
    readonly events?: Pick<EventBus, 'publish'>;
  },
  source: { readonly tenantId: string; readonly serverId: string },
  held: readonly HeldToolChange[],
): Promise<void> {
  const { tenantId, serverId } = source;
  for (const tool of held) {
    await sinks.audit?.append({
      tenantId,
      action: AUDIT_ACTIONS.TOOL_DEFINITION_CHANGED,
      resourceType: 'mcp_server',
      resourceId: `${serverId}/${tool.toolName}`,
      metadata: {
        actorType: 'system',
        serverId,
        tool: tool.toolName,
        approvedDigest: tool.approvedDigest,
        observedDigest: tool.observedDigest,
      },
    });
    sinks.events?.publish({
      type: EVENT_TYPES.TOOL_DEFINITION_CHANGED,
      tenantId: asTenantId(tenantId),
      serverId,
      toolName: tool.toolName,
    });
  }
}
