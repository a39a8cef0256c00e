// The queue itself: the pending calls, soonest to expire first, with the decision dialog, the
// desktop notification of a newly held call and the count in the tab title.
import { Alert, Badge, Code, Group, Loader, Stack, Text } from '@mantine/core';
import { IconLock } from '@tabler/icons-react';
import { useState } from 'react';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { useNow } from '../../components/use-now.ts';
import { DecisionDialog } from './decision-dialog.tsx';
import { DesktopNotificationControl } from './desktop-notification-control.tsx';
import { EmptyQueue } from './empty-queue.tsx';
import { type Decision, HeldCallCard } from './held-call-card.tsx';
import { pendingAt } from './held-calls.ts';
import type { HeldCall } from './operations.ts';
import { useApprovalQueue } from './use-approval-queue.ts';
import { useDesktopNotifications } from './use-desktop-notifications.ts';
import { useTabTitle } from './use-tab-title.ts';

export function ApprovalQueueView({
  canDecide,
  decideScope,
}: {
  canDecide: boolean;
  decideScope: string;
}) {
  const desktop = useDesktopNotifications();
  const queue = useApprovalQueue(true, (call) =>
    desktop.notify(
      'A call is waiting for approval',
      `${call.agent?.name ?? call.agentId} wants ${call.toolName} on ${call.serverId}`,
      call.id,
    ),
  );
  const now = useNow();
  const calls = pendingAt(queue.state, now);
  useTabTitle(calls.length);
  const [deciding, setDeciding] = useState<{ call: HeldCall; decision: Decision } | null>(null);

  return (
    <Stack>
      <Group justify="space-between">
        <Group gap="xs">
          <Text fw={500}>Waiting for a decision</Text>
          <Badge variant="filled" aria-label={`${calls.length} pending`}>
            {calls.length}
          </Badge>
        </Group>
        <DesktopNotificationControl desktop={desktop} />
      </Group>
      {canDecide ? null : (
        <Alert color="gray" icon={<IconLock size={18} />} title="You can watch, not decide">
          Your API key lacks the <Code>{decideScope}</Code> scope, needed to approve or reject a
          held call.
        </Alert>
      )}
      {queue.error ? <ErrorAlert error={queue.error} title="The queue could not be read" /> : null}
      {!queue.state.loaded && !queue.error ? <Loader aria-label="Loading the queue" /> : null}
      {queue.state.loaded && calls.length === 0 ? <EmptyQueue /> : null}
      {calls.map((call) => (
        <HeldCallCard
          key={call.id}
          call={call}
          now={now}
          onDecide={canDecide ? (held, decision) => setDeciding({ call: held, decision }) : null}
        />
      ))}
      {deciding ? (
        <DecisionDialog
          call={deciding.call}
          decision={deciding.decision}
          onClose={() => setDeciding(null)}
          onDecided={queue.markDecided}
          onRefused={queue.reload}
        />
      ) : null}
    </Stack>
  );
}
