// How many calls wait for a human now, the first few, and the way to the Approvals screen.
import { Anchor, Card, Group, Text, Title } from '@mantine/core';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { useSession } from '../../session/session.tsx';
import { PendingApprovalsQuery } from './queries.ts';

function PendingList() {
  const [{ data, error }] = useQuery({ query: PendingApprovalsQuery });
  if (error) return <ErrorAlert error={error} />;
  if (!data) return null;
  const pending = data.approvals.edges.map((edge) => edge.node);
  const more = data.approvals.pageInfo.hasNextPage ? '+' : '';
  return (
    <>
      <Text size="xl" fw={700} aria-label="Pending approvals count">
        {pending.length}
        {more}
      </Text>
      {pending.slice(0, 5).map((approval) => (
        <Text size="sm" key={approval.id}>
          <code>{approval.toolName}</code> on {approval.serverId} by {approval.agent.name}
        </Text>
      ))}
      <Anchor component={Link} href="~/console/approvals" size="sm" mt="xs">
        Open the approval queue
      </Anchor>
    </>
  );
}

export function PendingApprovalsCard() {
  const { hasScope } = useSession();
  return (
    <Card withBorder padding="md">
      <Group justify="space-between">
        <Title order={3} size="h5">
          Pending approvals
        </Title>
      </Group>
      {hasScope('approvals:decide') || hasScope('audit:read') ? (
        <PendingList />
      ) : (
        <Text size="sm" c="dimmed">
          Reading the approval queue needs the <code>approvals:decide</code> or{' '}
          <code>audit:read</code> scope.
        </Text>
      )}
    </Card>
  );
}
