// Tool-definition pinning (docs/tool-pinning.md), the pure part: whether a tool is held, and a
// tools/list result without the held tools. A tool's pin holds two digests (shared/tools/
// tool-definitions.ts toolDefinitionDigest): the one an operator approved (or the first one seen,
// under first_sight) and the one the upstream sent last. A tool is held while they differ; under
// approved_only a tool nobody approved is held too. The data plane's pipeline and the MCP proxy's
// tools/list filter decide with `pinVerdict`; storage decides which tools became held with it.
//
// Rules: under first_sight a tool never seen in a tools/list (no pin, no listed digest) is not
// affected, and a tool seen for the first time is pinned, not held. A digest from a tools/list
// being answered right now counts as the observed one, so a change is held in the very answer
// that reveals it, before the database has recorded it.
import { isRecord } from '../json/is-record.js';

export const TOOL_PINNING_MODES = ['first_sight', 'approved_only'] as const;
export type ToolPinningMode = (typeof TOOL_PINNING_MODES)[number];
export const DEFAULT_TOOL_PINNING: ToolPinningMode = 'first_sight';

/** A tool's pin as the snapshot carries it. */
export interface ToolPinDigests {
  /** The approved digest; null: never approved (approved_only). */
  readonly approved: string | null;
  /** The digest the upstream sent last. */
  readonly observed: string;
}

/** Why a tool is held: its definition changed since approval, or nobody approved it. */
export type ToolPinVerdict = 'changed' | 'not_approved';

/** Held or not (undefined: callable as far as pinning goes). */
export function pinVerdict(
  pin: ToolPinDigests | undefined,
  mode: ToolPinningMode,
  listedDigest?: string,
): ToolPinVerdict | undefined {
  const approved = pin?.approved ?? null;
  if (approved === null) {
    // Never approved: held only when the tenant wants every tool approved first.
    return mode === 'approved_only' ? 'not_approved' : undefined;
  }
  const observed = listedDigest ?? pin?.observed;
  return observed === approved ? undefined : 'changed';
}

export function isToolPinningMode(value: unknown): value is ToolPinningMode {
  return (TOOL_PINNING_MODES as readonly unknown[]).includes(value);
}

/**
 * A tools/list `result` with only the tools `keep` keeps (it gets each tool's name and whole
 * definition): the MCP proxy keeps what the agent may call and pinning does not hold. Everything
 * else (nextCursor, _meta, the tools kept and their annotations) is kept as it is; the result
 * itself is returned when nothing is removed, and anything that is not a tools/list result is
 * returned unchanged.
 */
export function keepListedTools<Result>(
  result: Result,
  keep: (name: string, definition: Readonly<Record<string, unknown>>) => boolean,
): Result {
  if (!isRecord(result) || !Array.isArray(result.tools)) return result;
  const tools = result.tools as unknown[];
  let kept: unknown[] | undefined;
  for (let index = 0; index < tools.length; index++) {
    const tool = tools[index];
    const held = isRecord(tool) && typeof tool.name === 'string' ? !keep(tool.name, tool) : false;
    if (held) kept ??= tools.slice(0, index);
    else kept?.push(tool);
  }
  return kept === undefined ? result : ({ ...result, tools: kept } as Result);
}
