// Whether deciding now still reaches a client: the MCP proxy holds the call only for the tenant's
// approvalWaitSeconds (120 s by default) and a long-poll for its `wait`, while the approval itself
// lives for approvalTtlSeconds (15 minutes). Past the client's wait, an approval takes effect only
// when the agent retries the call, and the approver should know that before deciding.
import { Text } from '@mantine/core';
import { IconHourglass, IconPlugConnectedX } from '@tabler/icons-react';
import { formatTimeLeft } from './time-left.tsx';

export function ClientWaiting({ until, now }: { until: string | null; now: number }) {
  const left = until === null ? 0 : Date.parse(until) - now;
  if (left > 0) {
    return (
      <Text size="sm" c="green.8" title={`The agent's call waits until ${until}`}>
        <IconHourglass size={14} style={{ verticalAlign: 'middle' }} aria-hidden /> Agent waiting —{' '}
        {formatTimeLeft(left)} left: a decision now reaches it at once
      </Text>
    );
  }
  return (
    <Text size="sm" c="dimmed">
      <IconPlugConnectedX size={14} style={{ verticalAlign: 'middle' }} aria-hidden /> No client
      waiting: the agent will see the decision when it retries the call
    </Text>
  );
}
