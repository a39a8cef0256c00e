// What each usage limit of the tenant has counted for one agent in its current window (GraphQL
// Agent.usage, the console's agent page): every limit of the gateway policy appears, a limit
// counted per AGENT_TOOL once per tool the agent called in the window (once with no tool when it
// called none). The counters are the data planes' (storage/tables/usage-counters.ts); call counts
// reach them in batches, so a count may lag the data planes by up to a second.
import { type UsageLimit, usageLimitsRule } from '../../shared/limits/usage-limits.js';
import { windowStartOf } from '../../shared/limits/windows.js';
import type { Database } from '../../storage/engine/database.js';
import { readAgentUsage, readDatabaseClock } from '../../storage/tables/usage-counters.js';

export interface LimitUsage {
  readonly limit: UsageLimit;
  /** The tool of an AGENT_TOOL limit's counter; null for the other subjects. */
  readonly toolName: string | null;
  readonly calls: number;
  /** The budget's sum (null without a budget). */
  readonly sum: number | null;
  readonly windowStartsAt: Date;
  readonly resetsAt: Date;
}

export async function readLimitUsage(
  db: Database,
  tenantId: string,
  agentId: string,
): Promise<LimitUsage[]> {
  const policy = await db.prisma.gatewayPolicy.findUnique({
    where: { tenantId },
    select: { limits: true },
  });
  const parsed = usageLimitsRule.safeParse(policy?.limits ?? []);
  if (!parsed.success || parsed.data.length === 0) return [];
  const [rows, now] = await Promise.all([
    readAgentUsage(db, tenantId, agentId),
    readDatabaseClock(db),
  ]);
  const usage: LimitUsage[] = [];
  for (const limit of parsed.data) {
    const start = windowStartOf(now, limit.windowSeconds);
    const window = {
      windowStartsAt: new Date(start * 1000),
      resetsAt: new Date((start + limit.windowSeconds) * 1000),
    };
    const counters = rows.filter(
      (row) =>
        row.limitId === limit.limitId &&
        row.windowSeconds === limit.windowSeconds &&
        row.agentId === (limit.per === 'TENANT' ? '' : agentId),
    );
    const budget = limit.sumArgument !== null;
    if (counters.length === 0) {
      usage.push({ limit, toolName: null, calls: 0, sum: budget ? 0 : null, ...window });
      continue;
    }
    for (const counter of counters) {
      usage.push({
        limit,
        toolName: limit.per === 'AGENT_TOOL' ? counter.toolName : null,
        calls: counter.calls,
        sum: budget ? Number(counter.amount) : null,
        ...window,
      });
    }
  }
  return usage;
}
