// The Overview: what the gateway decided lately (decision counts reported by every data plane,
// allows included — they are not audited; policy denies apart from client errors, the malformed
// requests), what it denies most and why, what waits for a human, and which configuration each
// data plane serves. The counts refresh every 15 s.
import {
  Button,
  Card,
  Grid,
  Group,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { useInterval } from '@mantine/hooks';
import { IconRefresh } from '@tabler/icons-react';
import { useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { RequireScope } from '../../components/require-scope.tsx';
import { DataPlanesCard } from './data-planes-card.tsx';
import { DECISION_SERIES, DecisionsChart, seriesCounts } from './decisions-chart.tsx';
import { PendingApprovalsCard } from './pending-approvals-card.tsx';
import { DecisionStatsQuery } from './queries.ts';
import { RankedList } from './ranked-list.tsx';

const WINDOWS = [
  { value: '15', label: '15 min' },
  { value: '60', label: '1 h' },
  { value: '360', label: '6 h' },
  { value: '1440', label: '24 h' },
];
const REFRESH_MS = 15_000;

/** What each tile counts, in a line. */
const SERIES_NOTES: Record<(typeof DECISION_SERIES)[number]['name'], string> = {
  allow: 'Calls that passed',
  deny: 'Refused by policy, identity or limits',
  client_error: 'Malformed requests (e.g. MCP_MALFORMED_RPC)',
  require_human_approval: 'Calls an NPL rule held for a human',
};

function DecisionStatsPanel({ windowMinutes }: { windowMinutes: number }) {
  const [{ data, error, fetching }, refetch] = useQuery({
    query: DecisionStatsQuery,
    variables: { windowMinutes },
    requestPolicy: 'network-only',
  });
  const interval = useInterval(() => refetch({ requestPolicy: 'network-only' }), REFRESH_MS);
  useEffect(() => {
    interval.start();
    return interval.stop;
  }, [interval]);
  if (error) return <ErrorAlert error={error} />;
  if (!data) return null;
  const stats = data.decisionStats;
  const totals = seriesCounts(stats.totals, stats.clientErrors);
  return (
    <Stack>
      <SimpleGrid cols={{ base: 2, md: 4 }}>
        {DECISION_SERIES.map((series) => (
          <Card withBorder padding="md" key={series.name}>
            <Text size="sm" c="dimmed">
              {series.label}
            </Text>
            <Text size="xl" fw={700} aria-label={`${series.label} in the window`}>
              {totals[series.name]}
            </Text>
            <Text size="xs" c="dimmed">
              {SERIES_NOTES[series.name]}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
      <Card withBorder padding="md">
        <Group justify="space-between" mb="sm">
          <Title order={3} size="h5">
            Decisions per minute
          </Title>
          <Button
            variant="subtle"
            size="xs"
            leftSection={<IconRefresh size={14} />}
            loading={fetching}
            onClick={() => refetch({ requestPolicy: 'network-only' })}
          >
            Refresh
          </Button>
        </Group>
        <DecisionsChart stats={stats} />
        <Text size="xs" c="dimmed" mt="xs">
          Reported by{' '}
          {stats.reporters.length === 0
            ? 'no data plane yet'
            : stats.reporters
                .map((reporter) =>
                  reporter.dataPlaneId ? reporter.name : `${reporter.name} (in-process)`,
                )
                .join(', ')}
          ; counted by each data plane as it decides, allows included.
        </Text>
      </Card>
      <Grid>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Card withBorder padding="md" h="100%">
            <Title order={3} size="h5" mb="sm">
              Top denied tools
            </Title>
            <RankedList
              caption="Top denied tools"
              empty="Nothing denied in this window."
              items={stats.topDeniedTools.map((tool) => ({
                key: `${tool.serverId}/${tool.toolName}`,
                label: tool.toolName,
                detail: `on ${tool.serverId}`,
                count: tool.count,
              }))}
            />
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Card withBorder padding="md" h="100%">
            <Title order={3} size="h5" mb="sm">
              Top reason codes
            </Title>
            <RankedList
              caption="Top reason codes"
              empty="No denies or holds in this window."
              items={stats.topReasonCodes.map((reason) => ({
                key: reason.reasonCode,
                label: reason.reasonCode,
                count: reason.count,
              }))}
            />
          </Card>
        </Grid.Col>
      </Grid>
    </Stack>
  );
}

export function OverviewScreen() {
  const [windowMinutes, setWindowMinutes] = useState('60');
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Overview</Title>
        <SegmentedControl
          aria-label="Time window"
          data={WINDOWS}
          value={windowMinutes}
          onChange={setWindowMinutes}
        />
      </Group>
      <RequireScope scope="audit:read" to="read the decision counts of the data planes">
        <DecisionStatsPanel windowMinutes={Number(windowMinutes)} />
      </RequireScope>
      <Grid>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <PendingApprovalsCard />
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 8 }}>
          <DataPlanesCard />
        </Grid.Col>
      </Grid>
    </Stack>
  );
}
