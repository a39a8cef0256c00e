// Decisions per minute by outcome, stacked, over the chosen window (Mantine's BarChart over
// recharts). Minutes without decisions are filled in as zeros so the time axis is even.
import { BarChart } from '@mantine/charts';
import { Text } from '@mantine/core';
import type { ResultOf } from '../../graphql.ts';
import type { DecisionStatsQuery } from './queries.ts';

type Stats = ResultOf<typeof DecisionStatsQuery>['decisionStats'];

export const OUTCOME_SERIES = [
  { name: 'allow', label: 'Allowed', color: 'teal.6' },
  { name: 'deny', label: 'Denied', color: 'red.6' },
  { name: 'require_human_approval', label: 'Held for approval', color: 'yellow.6' },
] as const;

const MINUTE = 60_000;

function minuteLabel(time: number): string {
  return new Date(time).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

export function DecisionsChart({ stats }: { stats: Stats }) {
  const byMinute = new Map(
    stats.perMinute.map((row) => [
      Date.parse(row.minute),
      Object.fromEntries(row.counts.map((count) => [count.outcome, count.count])),
    ]),
  );
  const first = Date.parse(stats.since);
  const data = [];
  for (let minute = first, i = 0; i < stats.windowMinutes; minute += MINUTE, i++) {
    const counts = byMinute.get(minute) ?? {};
    data.push({
      minute: minuteLabel(minute),
      allow: counts.allow ?? 0,
      deny: counts.deny ?? 0,
      require_human_approval: counts.require_human_approval ?? 0,
    });
  }
  if (stats.perMinute.length === 0) {
    return (
      <Text c="dimmed" size="sm">
        No decisions in this window. Inspect requests and MCP proxy calls are counted by the data
        planes as they decide them.
      </Text>
    );
  }
  return (
    <BarChart
      h={240}
      data={data}
      dataKey="minute"
      type="stacked"
      series={OUTCOME_SERIES.map(({ name, label, color }) => ({ name, label, color }))}
      withLegend
      tickLine="y"
      aria-label="Decisions per minute by outcome"
    />
  );
}
