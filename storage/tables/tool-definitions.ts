// Writes what was learnt of an upstream's tools to its McpServer row. Both planes write here: the
// control plane's refresher (a full `tools/list`, when a server is registered or changed, and
// periodically) and the data plane (each `tools/list` answer an agent's call passes through, which
// may be one page of several). A write applies only while the row still points at the URL that
// was listed, so a slow answer of an old URL never lands on a server moved elsewhere. When the
// stored definitions change, the tenant's configVersion is bumped in the same transaction: every
// snapshot publisher notices (readConfigFingerprint) and data planes get the new annotations.
// A failed refresh keeps the definitions and records why and when, for the operator.
// In the same transaction each listed tool is observed against its pin (storage/tables/tool-pins.ts):
// the tools the write made held come back with the result, for the caller to audit and publish.

import { canonicalJson } from '../../shared/json/canonical-json.js';
import {
  type ListedTool,
  MAX_STORED_TOOLS,
  readStoredDefinitions,
  toStoredDefinitions,
} from '../../shared/tools/tool-definitions.js';
import type { Database } from '../engine/database.js';
import { bumpConfigVersion } from './config-version.js';
import { type HeldToolChange, observeToolPins } from './tool-pins.js';

export interface StoreToolDefinitionsInput {
  readonly tenantId: string;
  readonly serverId: string;
  /** The URL that was listed. */
  readonly url: string;
  readonly tools: readonly ListedTool[];
  /**
   * true: the whole list (it replaces the stored definitions and counts as a refresh);
   * false: a part of it (one page passing through): its tools are added or replaced.
   */
  readonly complete: boolean;
  readonly at?: Date;
}

/**
 * `changed`: the stored definitions or the tools' pins differ now; `gone`: no row at that URL
 * any more.
 */
export type StoreToolDefinitionsResult = 'changed' | 'unchanged' | 'gone';

export interface StoreToolDefinitionsOutcome {
  readonly result: StoreToolDefinitionsResult;
  /**
   * Tools this write made held (their definition differs from the approved one, or, under
   * approved_only, nobody approved them), each once per change of definition.
   */
  readonly held: readonly HeldToolChange[];
}

const GONE: StoreToolDefinitionsOutcome = Object.freeze({ result: 'gone', held: [] });

export async function storeToolDefinitions(
  db: Database,
  input: StoreToolDefinitionsInput,
): Promise<StoreToolDefinitionsOutcome> {
  const { tenantId, serverId, url } = input;
  const learnt = toStoredDefinitions(input.tools);
  const at = input.at ?? new Date();
  return db.prisma.$transaction(async (tx) => {
    // The server's row lock: two writers of one server (the refresher and a pass-through) take
    // turns, so neither overwrites what the other merged and a tool is pinned once.
    const rows = await tx.$queryRaw<{ url: string; toolAnnotations: unknown }[]>`
      select url, "toolAnnotations" from mcp_servers
      where "tenantId" = ${tenantId} and "serverId" = ${serverId} for update`;
    const row = rows[0];
    if (row === undefined || row.url !== url) return GONE;
    const current = readStoredDefinitions(row.toolAnnotations);
    const next = input.complete ? learnt : { ...current, ...learnt };
    if (Object.keys(next).length > MAX_STORED_TOOLS) {
      throw new RangeError(`more than ${MAX_STORED_TOOLS} tools for one server`);
    }
    const pins = await observeToolPins(tx, { tenantId, serverId, tools: input.tools, at });
    const definitionsChanged = canonicalJson(next) !== canonicalJson(current);
    const changed = definitionsChanged || pins.changed;
    if (definitionsChanged || input.complete) {
      await tx.mcpServer.update({
        where: { tenantId_serverId: { tenantId, serverId } },
        data: {
          ...(definitionsChanged ? { toolAnnotations: next as object } : {}),
          ...(input.complete
            ? { toolsRefreshedAt: at, toolsRefreshError: null, toolsRefreshFailedAt: null }
            : {}),
        },
      });
    }
    if (changed) await bumpConfigVersion(tx, tenantId);
    return { result: changed ? 'changed' : 'unchanged', held: pins.held };
  });
}

export interface StoreToolRefreshFailureInput {
  readonly tenantId: string;
  readonly serverId: string;
  readonly url: string;
  /** Why, short and safe to show (no response bodies, no secrets). */
  readonly error: string;
  readonly at?: Date;
}

/** Records a failed refresh; the stored definitions stay. False when the row moved or left. */
export async function storeToolRefreshFailure(
  db: Database,
  input: StoreToolRefreshFailureInput,
): Promise<boolean> {
  const { count } = await db.prisma.mcpServer.updateMany({
    where: { tenantId: input.tenantId, serverId: input.serverId, url: input.url },
    data: { toolsRefreshError: input.error, toolsRefreshFailedAt: input.at ?? new Date() },
  });
  return count > 0;
}
