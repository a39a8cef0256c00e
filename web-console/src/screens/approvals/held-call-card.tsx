// One held call as an approver judges it: who asks for which tool with what arguments (secrets
// masked as the detectors see them), which rule of which policy held it and why (or which usage
// limit, and the usage that triggered it), whether a client still waits for the decision, and
// when the approval expires.
import { Anchor, Button, Card, Code, Group, Stack, Text, Title } from '@mantine/core';
import { IconCheck, IconX } from '@tabler/icons-react';
import { Link } from 'wouter';
import {
  formatAmount,
  LIMIT_SUBJECT_TEXT,
  UsageMeter,
  windowText,
} from '../../components/usage-meter.tsx';
import { ClientWaiting } from './client-waiting.tsx';
import type { HeldCall } from './operations.ts';
import { TimeLeft } from './time-left.tsx';

/** What a REQUIRE_HUMAN usage limit had counted when it held the call, and what the call adds. */
function HeldByLimit({ limit }: { limit: NonNullable<HeldCall['limit']> }) {
  return (
    <Stack gap={4}>
      <Text size="sm">
        Held by usage limit <Code>{limit.limitId}</Code> ({LIMIT_SUBJECT_TEXT[limit.per]}, a{' '}
        {windowText(limit.windowSeconds)} window): approving lets it pass past the maximum
      </Text>
      <Group gap="sm">
        <UsageMeter used={limit.used} max={limit.max} label={`${limit.limitId} used`} />
        <Text size="sm">
          used before this call, which adds {formatAmount(limit.requested)}:{' '}
          {formatAmount(limit.used + limit.requested)} of {formatAmount(limit.max)} with it. Resets{' '}
          {new Date(limit.resetsAt).toLocaleString()}.
        </Text>
      </Group>
    </Stack>
  );
}

export type Decision = 'approve' | 'reject';

export function HeldCallCard({
  call,
  now,
  onDecide,
}: {
  call: HeldCall;
  now: number;
  /** Null when the key may not decide: no buttons are shown. */
  onDecide: ((call: HeldCall, decision: Decision) => void) | null;
}) {
  const agentName = call.agent?.name ?? call.agentId;
  return (
    <Card withBorder component="article" aria-label={`Held call ${call.toolName} by ${agentName}`}>
      <Stack gap="xs">
        <Group justify="space-between" wrap="nowrap" align="flex-start">
          <div>
            <Title order={3} size="h4">
              <Anchor component={Link} href={`/${encodeURIComponent(call.id)}`} inherit>
                {call.toolName}
              </Anchor>
              <Text span c="dimmed" fw={400}>
                {' '}
                on {call.serverId}
              </Text>
            </Title>
            <Text size="sm">
              Agent <strong>{agentName}</strong>{' '}
              <Text span size="xs" c="dimmed">
                {call.agentId}
              </Text>
            </Text>
          </div>
          <TimeLeft expiresAt={call.expiresAt} now={now} />
        </Group>
        <ClientWaiting until={call.clientWaitingUntil ?? null} now={now} />
        {call.limit ? (
          <HeldByLimit limit={call.limit} />
        ) : (
          <Text size="sm">
            Held by rule <Code>{call.ruleId ?? 'unknown'}</Code> of{' '}
            <Code>{call.policyUri ?? 'no policy'}</Code>
          </Text>
        )}
        {/* A limit's hold reason restates its usage, shown above. */}
        {call.reason && !call.limit ? <Text size="sm">Reason: {call.reason}</Text> : null}
        <div>
          <Text size="xs" c="dimmed" mb={4}>
            Arguments ({call.method})
          </Text>
          <Code block>{JSON.stringify(call.maskedArguments ?? {}, null, 2)}</Code>
        </div>
        {onDecide ? (
          <Group gap="sm">
            <Button
              color="green"
              leftSection={<IconCheck size={16} />}
              onClick={() => onDecide(call, 'approve')}
            >
              Approve
            </Button>
            <Button
              color="red"
              variant="light"
              leftSection={<IconX size={16} />}
              onClick={() => onDecide(call, 'reject')}
            >
              Reject
            </Button>
          </Group>
        ) : null}
      </Stack>
    </Card>
  );
}
