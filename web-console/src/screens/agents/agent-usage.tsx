// What each usage limit of the gateway policy has counted for the agent in its current window
// (Agent.usage, docs/limits.md): calls against maxCalls and the budget's sum against maxSum, one
// row per tool for a limit counted per agent and tool, and when the window resets. Call counts
// reach the database in batches, so they may lag the data planes by about a second: the section
// reads again on Refresh, and by itself when its earliest window ends (the counts start again).
import { Badge, Button, Code, Group, Stack, Table, Text, Title } from '@mantine/core';
import { IconRefresh } from '@tabler/icons-react';
import { useEffect } from 'react';
import { useQuery } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import {
  formatAmount,
  LIMIT_SUBJECT_TEXT,
  UsageMeter,
  untilText,
} from '../../components/usage-meter.tsx';
import { AgentUsageQuery, type LimitUsageRow } from './operations.ts';

/** setTimeout's longest delay (about 24.8 days); a 30-day window is read again sooner. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function UsageRow({ row, now }: { row: LimitUsageRow; now: number }) {
  const tool = row.per === 'AGENT_TOOL' ? row.toolName : null;
  const name = tool ? `${row.limitId} on ${tool}` : row.limitId;
  return (
    <Table.Tr>
      <Table.Td>
        <Group gap={6} wrap="nowrap">
          <Code>{row.limitId}</Code>
          <Badge
            variant="light"
            color={row.action === 'DENY' ? 'red' : 'yellow'}
            title={row.action === 'DENY' ? 'Refused past it' : 'Held for a human past it'}
          >
            {row.action === 'DENY' ? 'deny' : 'hold'}
          </Badge>
        </Group>
      </Table.Td>
      <Table.Td>{LIMIT_SUBJECT_TEXT[row.per]}</Table.Td>
      <Table.Td>
        {row.per !== 'AGENT_TOOL' ? (
          '—'
        ) : tool ? (
          <Code>{tool}</Code>
        ) : (
          <Text size="sm" c="dimmed" span>
            no call yet
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        {row.maxCalls !== null ? (
          <UsageMeter used={row.calls} max={row.maxCalls} label={`${name} calls`} />
        ) : (
          <Text size="sm" span>
            {formatAmount(row.calls)}{' '}
            <Text span size="xs" c="dimmed">
              (not limited)
            </Text>
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        {row.maxSum !== null ? (
          <UsageMeter used={row.sum ?? 0} max={row.maxSum} label={`${name} sum`} />
        ) : (
          '—'
        )}
      </Table.Td>
      <Table.Td
        title={`Window from ${new Date(row.windowStartsAt).toLocaleString()} to ${new Date(
          row.resetsAt,
        ).toLocaleString()}`}
      >
        {new Date(row.resetsAt).toLocaleString()}
        <Text span size="xs" c="dimmed">
          {' '}
          (in {untilText(Date.parse(row.resetsAt) - now)})
        </Text>
      </Table.Td>
    </Table.Tr>
  );
}

export function AgentUsage({ agentId }: { agentId: string }) {
  const [result, reexecute] = useQuery({ query: AgentUsageQuery, variables: { id: agentId } });
  const rows = result.data?.agent?.usage ?? null;
  const refresh = () => reexecute({ requestPolicy: 'network-only' });

  // When the earliest window ends its counts start again from zero: read them again then.
  const nextReset = rows?.reduce(
    (earliest, row) => Math.min(earliest, Date.parse(row.resetsAt)),
    Number.POSITIVE_INFINITY,
  );
  useEffect(() => {
    if (nextReset === undefined || !Number.isFinite(nextReset)) return;
    const timer = window.setTimeout(
      () => reexecute({ requestPolicy: 'network-only' }),
      Math.min(MAX_TIMER_MS, Math.max(0, nextReset - Date.now()) + 1000),
    );
    return () => window.clearTimeout(timer);
  }, [nextReset, reexecute]);

  const now = Date.now();
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={3}>Usage limits</Title>
        <Button
          variant="subtle"
          size="compact-sm"
          leftSection={<IconRefresh size={14} />}
          loading={result.fetching}
          onClick={refresh}
        >
          Refresh usage
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        What each limit of the gateway policy has counted for this agent in its current window (a
        whole-tenant limit counts every agent's calls). Call counts may lag by about a second.
      </Text>
      {result.error ? <ErrorAlert error={result.error} /> : null}
      {rows !== null && rows.length === 0 ? (
        <Text size="sm">The gateway policy has no usage limits: calls are not counted.</Text>
      ) : null}
      {rows !== null && rows.length > 0 ? (
        <Table aria-label="Usage limits">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Limit</Table.Th>
              <Table.Th>Counted</Table.Th>
              <Table.Th>Tool</Table.Th>
              <Table.Th>Calls</Table.Th>
              <Table.Th>Budget</Table.Th>
              <Table.Th>Resets</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((row) => (
              <UsageRow key={`${row.limitId}/${row.toolName ?? ''}`} row={row} now={now} />
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
    </Stack>
  );
}
