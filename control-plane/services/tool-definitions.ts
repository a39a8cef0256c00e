// Tool-definition pins for operators (docs/tool-pinning.md): every pin of a tenant's server with
// whether it is held under the tenant's pinning mode, what changed (the top-level definition
// fields that differ), and the approval of an observed definition. An approval names the digest
// the operator reviewed: it applies only while that is still the observed one, so a definition
// that changed again after the review is never approved unseen. An approval is written with the
// configVersion bump, audited as tool_definition.approved, published, and only then announced on
// the event bus (toolDefinitionEvents), as spawn announces an agent: a subscriber told of the
// approval finds the tool callable. This service publishes the snapshot itself for that reason.
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import { EVENT_TYPES, type EventBus } from '../../shared/events/index.js';
import { asTenantId } from '../../shared/ids.js';
import { canonicalJson } from '../../shared/json/canonical-json.js';
import { isRecord } from '../../shared/json/is-record.js';
import { pinVerdict, type ToolPinningMode } from '../../shared/tools/tool-pins.js';
import type { Database } from '../../storage/engine/database.js';
import { bumpConfigVersion } from '../../storage/tables/config-version.js';
import { readToolPinningMode } from '../../storage/tables/tool-pins.js';
import type { SnapshotPublisher } from '../snapshot/publisher.js';
import {
  auditOperatorChange,
  type OperatorChange,
  type OperatorChangeDependencies,
} from './operator-audit.js';

/** APPROVED: callable as it is; CHANGED: differs from the approved one; NOT_APPROVED: never was. */
export type ToolDefinitionStatus = 'approved' | 'changed' | 'not_approved';

export interface ToolDefinitionRecord {
  readonly serverId: string;
  readonly toolName: string;
  readonly status: ToolDefinitionStatus;
  /** Hidden from the MCP proxy's tools/list and its calls denied, under the tenant's mode. */
  readonly held: boolean;
  readonly approvedDigest: string | null;
  readonly approvedDefinition: unknown;
  readonly approvedAt: Date | null;
  readonly approvedBy: string | null;
  readonly observedDigest: string;
  readonly observedDefinition: unknown;
  readonly observedAt: Date;
  /** Top-level fields of the definition that differ; empty when never approved or unchanged. */
  readonly changedFields: readonly string[];
}

type PinRow = Awaited<ReturnType<Database['prisma']['toolDefinitionPin']['findMany']>>[number];

/** The tenant's pins (of one server, or all), ordered by server and tool. */
export async function listToolDefinitions(
  db: Database,
  tenantId: string,
  filter: { readonly serverId?: string; readonly heldOnly?: boolean } = {},
): Promise<ToolDefinitionRecord[]> {
  const [mode, rows] = await db.prisma.$transaction(async (tx) =>
    Promise.all([
      readToolPinningMode(tx, tenantId),
      tx.toolDefinitionPin.findMany({
        where: {
          tenantId,
          ...(filter.serverId === undefined ? {} : { serverId: filter.serverId }),
        },
        orderBy: [{ serverId: 'asc' }, { toolName: 'asc' }],
      }),
    ]),
  );
  const records = rows.map((row) => toRecord(row, mode));
  return filter.heldOnly ? records.filter((record) => record.held) : records;
}

export interface ToolDefinitionServiceDependencies extends OperatorChangeDependencies {
  /** Publishes the approval before it is announced. */
  readonly publisher: Pick<SnapshotPublisher, 'publishNow'>;
  /** Where an approval is announced to toolDefinitionEvents subscribers. */
  readonly events: Pick<EventBus, 'publish'>;
}

/** The approver (api_key:{id}) is the actor: recorded as approvedBy and in the audit entry. */
export interface ApproveToolDefinitionInput extends OperatorChange {
  readonly serverId: string;
  readonly toolName: string;
  /** The observed digest the operator reviewed. */
  readonly digest: string;
}

/**
 * Makes the observed definition the approved one, when `digest` is still the observed digest.
 * NOT_FOUND when the tenant has no such pin; REQUEST_INVALID naming the current digest when the
 * operator reviewed another one (nothing written, audited or announced then). Resolves once the
 * data plane serves the approval.
 */
export async function approveToolDefinition(
  deps: ToolDefinitionServiceDependencies,
  input: ApproveToolDefinitionInput,
): Promise<ToolDefinitionRecord> {
  const { tenantId, serverId, toolName, digest } = input;
  const { record, previousDigest } = await deps.db.prisma.$transaction(async (tx) => {
    const where = { tenantId_serverId_toolName: { tenantId, serverId, toolName } };
    const pin = await tx.toolDefinitionPin.findUnique({ where });
    if (pin === null) {
      throw gatewayError('NOT_FOUND', {
        resource: `tool ${toolName} of MCP server ${serverId} in this tenant`,
      });
    }
    if (pin.observedDigest !== digest) {
      throw gatewayError(
        'REQUEST_INVALID',
        {
          problem:
            `digest: ${digest} is not the current definition of tool ${toolName} of server ` +
            `${serverId}; its observed digest is ${pin.observedDigest}. Review that definition ` +
            'and approve its digest.',
        },
        {
          details: {
            issues: [{ field: 'digest', message: `the observed digest is ${pin.observedDigest}` }],
            observedDigest: pin.observedDigest,
          },
        },
      );
    }
    const updated = await tx.toolDefinitionPin.update({
      where,
      data: {
        approvedDigest: pin.observedDigest,
        approvedDefinition: pin.observedDefinition as object,
        approvedAt: new Date(),
        approvedBy: input.actor,
      },
    });
    await bumpConfigVersion(tx, tenantId);
    const mode = await readToolPinningMode(tx, tenantId);
    return { record: toRecord(updated, mode), previousDigest: pin.approvedDigest };
  });
  await auditOperatorChange(
    deps.audit,
    input,
    AUDIT_ACTIONS.TOOL_DEFINITION_APPROVED,
    { type: 'mcp_server', id: `${serverId}/${toolName}` },
    { serverId, tool: toolName, digest: record.observedDigest, previousDigest },
  );
  await deps.publisher.publishNow();
  deps.events.publish({
    type: EVENT_TYPES.TOOL_DEFINITION_APPROVED,
    tenantId: asTenantId(tenantId),
    serverId,
    toolName,
  });
  return record;
}

function toRecord(row: PinRow, mode: ToolPinningMode): ToolDefinitionRecord {
  const pin = { approved: row.approvedDigest, observed: row.observedDigest };
  const status: ToolDefinitionStatus =
    row.approvedDigest === null
      ? 'not_approved'
      : row.approvedDigest === row.observedDigest
        ? 'approved'
        : 'changed';
  return {
    serverId: row.serverId,
    toolName: row.toolName,
    status,
    held: pinVerdict(pin, mode) !== undefined,
    approvedDigest: row.approvedDigest,
    approvedDefinition: row.approvedDefinition,
    approvedAt: row.approvedAt,
    approvedBy: row.approvedBy,
    observedDigest: row.observedDigest,
    observedDefinition: row.observedDefinition,
    observedAt: row.observedAt,
    changedFields:
      status === 'changed' ? changedFields(row.approvedDefinition, row.observedDefinition) : [],
  };
}

/** The top-level fields of two definitions that differ (present in one only, or unequal). */
export function changedFields(approved: unknown, observed: unknown): string[] {
  const a = asObject(approved);
  const b = asObject(observed);
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...fields]
    .filter((field) => {
      if (!(field in a) || !(field in b)) return true;
      return canonicalJson(a[field]) !== canonicalJson(b[field]);
    })
    .sort();
}

function asObject(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
