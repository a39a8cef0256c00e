// A tenant's usage limits compiled once per snapshot (docs/limits.md): each limit's tool globs and
// servers as matchers, its budget path split, and the limits that match a (server, tool) pair
// memoized, so a call under no limit pays one map lookup and a call under limits pays no
// matching at all after the first. Pure: the counting is usage-limiter.ts.
import { compileSumPath } from '../../shared/limits/amounts.js';
import { isBudget, type UsageLimit } from '../../shared/limits/usage-limits.js';
import { compileNamePatterns, type NameTest } from '../../shared/tools/name-globs.js';

export interface CompiledLimit {
  readonly limit: UsageLimit;
  /** Sums an argument: every reservation is a conditional update on the database. */
  readonly budget: boolean;
  /** The budget's argument path, split once; empty for a call-count limit. */
  readonly sumPath: readonly string[];
  /** maxSum as decimal text, the form the database sums in; null without a budget. */
  readonly maxSumText: string | null;
}

export interface CompiledLimits {
  /** Every limit, in the policy's order. */
  readonly all: readonly CompiledLimit[];
  /** The limits a tools/call of `toolName` on `serverId` meets, in the policy's order. */
  matching(serverId: string, toolName: string): readonly CompiledLimit[];
}

const NO_LIMITS: readonly CompiledLimit[] = Object.freeze([]);
/** Distinct (server, tool) pairs remembered per tenant; beyond it, matching runs per call. */
const MEMO_CAPACITY = 4096;

export const NO_COMPILED_LIMITS: CompiledLimits = Object.freeze({
  all: NO_LIMITS,
  matching: () => NO_LIMITS,
});

export function compileLimits(limits: readonly UsageLimit[]): CompiledLimits {
  if (limits.length === 0) return NO_COMPILED_LIMITS;
  const compiled = limits.map((limit) => ({
    limit,
    budget: isBudget(limit),
    sumPath: limit.sumArgument === null ? [] : compileSumPath(limit.sumArgument),
    maxSumText: limit.maxSum === null ? null : decimalText(limit.maxSum),
    matchesTool: limit.tools.length === 0 ? null : compileNamePatterns(limit.tools),
    servers: limit.servers.length === 0 ? null : new Set(limit.servers),
  }));
  const memo = new Map<string, readonly CompiledLimit[]>();
  return {
    all: compiled,
    matching(serverId, toolName) {
      const memoKey = `${serverId}\u0000${toolName}`;
      const known = memo.get(memoKey);
      if (known !== undefined) return known;
      const found = compiled.filter((entry) => applies(entry, serverId, toolName));
      const result = found.length === 0 ? NO_LIMITS : Object.freeze(found);
      if (memo.size < MEMO_CAPACITY) memo.set(memoKey, result);
      return result;
    },
  };
}

function applies(
  entry: { matchesTool: NameTest | null; servers: ReadonlySet<string> | null },
  serverId: string,
  toolName: string,
): boolean {
  return (
    (entry.servers === null || entry.servers.has(serverId)) &&
    (entry.matchesTool === null || entry.matchesTool(toolName))
  );
}

/**
 * A JSON number as the decimal text PostgreSQL's numeric reads exactly: `0.1` stays `0.1` (the
 * shortest text that round-trips, never the binary expansion), exponents written out.
 */
export function decimalText(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  return value.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 20 });
}
