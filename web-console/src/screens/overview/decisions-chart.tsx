// Decisions per minute, stacked, over the chosen window (Mantine's BarChart over recharts):
// allowed, denied by policy, client errors (malformed requests: denies the server counts apart in
// clientErrors) and held. Minutes without decisions are filled in as zeros so the axis is even.
import { BarChart } from '@mantine/charts';
import { Text } from '@mantine/core';
import type { ResultOf } from '../../graphql.ts';
import type { DecisionStatsQuery } from './queries.ts';

type Stats = ResultOf<typeof DecisionStatsQuery>['decisionStats'];

export const DECISION_SERIES = [
  { name: 'allow', label: 'Allowed', color: 'teal.6' },
  { name: 'deny', label: 'Denied', color: 'red.6' },
  { name: 'client_error', label: 'Client errors', color: 'gray.6' },
  { name: 'require_human_approval', label: 'Held for approval', color: 'yellow.6' },
] as const;

export type SeriesName = (typeof DECISION_SERIES)[number]['name'];

/** Outcome counts as the series: policy denies are the denies that are not client errors. */
export function seriesCounts(
  counts: readonly { outcome: string; count: number }[],
  clientErrors: number,
): Record<SeriesName, number> {
  const of = (outcome: string) => counts.find((count) => count.outcome === outcome)?.count ?? 0;
  return {
    allow: of('allow'),
    deny: Math.max(of('deny') - clientErrors, 0),
    client_error: clientErrors,
    require_human_approval: of('require_human_approval'),
  };
}

const MINUTE = 60_000;

function minuteLabel(time: number): string {
  return new Date(time).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

export function DecisionsChart({ stats }: { stats: Stats }) {
  const byMinute = new Map(
    stats.perMinute.map((row) => [
      Date.parse(row.minute),
      seriesCounts(row.counts, row.clientErrors),
    ]),
  );
  const first = Date.parse(stats.since);
  const data = [];
  for (let minute = first, i = 0; i < stats.windowMinutes; minute += MINUTE, i++) {
    data.push({ minute: minuteLabel(minute), ...(byMinute.get(minute) ?? seriesCounts([], 0)) });
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
      series={DECISION_SERIES.map(({ name, label, color }) => ({ name, label, color }))}
      withLegend
      tickLine="y"
      aria-label="Decisions per minute by outcome"
    />
  );
}
