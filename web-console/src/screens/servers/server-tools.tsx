// A server's tools as the gateway pinned them (docs/tool-pinning.md): every pinned definition,
// and the held ones with what changed, the approved and the observed definition side by side,
// and "Approve definition", which approves exactly the observed digest that was shown.
import {
  Alert,
  Badge,
  Button,
  Card,
  Code,
  Drawer,
  Group,
  Loader,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconCheck } from '@tabler/icons-react';
import { useMutation, useQuery } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { ApproveToolDefinitionMutation, ServerToolsQuery, type ToolDefinition } from './queries.ts';

const STATUS_COLOR = { APPROVED: 'green', CHANGED: 'red', NOT_APPROVED: 'yellow' } as const;

function StatusBadge({ definition }: { definition: ToolDefinition }) {
  return (
    <Badge variant="light" color={STATUS_COLOR[definition.status]}>
      {definition.status.toLowerCase().replace('_', ' ')}
      {definition.held ? ' · held' : ''}
    </Badge>
  );
}

function PendingChange({ change, onApproved }: { change: ToolDefinition; onApproved(): void }) {
  const [state, approve] = useMutation(ApproveToolDefinitionMutation);
  const run = async () => {
    const result = await approve({
      input: {
        serverId: change.serverId,
        toolName: change.toolName,
        digest: change.observedDigest,
      },
    });
    if (result.error) return;
    notifications.show({ color: 'green', message: `${change.toolName}: definition approved` });
    onApproved();
  };
  return (
    <Card withBorder padding="sm" aria-label={`Pending change of ${change.toolName}`}>
      <Stack gap="xs">
        <Group justify="space-between">
          <Group gap="xs">
            <Text fw={600}>{change.toolName}</Text>
            <StatusBadge definition={change} />
          </Group>
          <Button
            size="xs"
            leftSection={<IconCheck size={14} />}
            loading={state.fetching}
            onClick={() => void run()}
            aria-label={`Approve definition of ${change.toolName}`}
          >
            Approve definition
          </Button>
        </Group>
        {change.changedFields.length > 0 ? (
          <Text size="sm">
            Changed:{' '}
            {change.changedFields.map((field) => (
              <Code key={field}>{field}</Code>
            ))}
          </Text>
        ) : null}
        <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
          Approving {change.observedDigest}
        </Text>
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <Stack gap={4}>
            <Text size="sm" fw={500}>
              Approved
            </Text>
            <Code block>
              {change.approvedDefinition === null
                ? 'never approved'
                : JSON.stringify(change.approvedDefinition, null, 2)}
            </Code>
          </Stack>
          <Stack gap={4}>
            <Text size="sm" fw={500}>
              Observed
            </Text>
            <Code block>{JSON.stringify(change.observedDefinition, null, 2)}</Code>
          </Stack>
        </SimpleGrid>
        {state.error ? <ErrorAlert error={state.error} /> : null}
      </Stack>
    </Card>
  );
}

function ToolsOfServer({ serverId }: { serverId: string }) {
  const [{ data, error, fetching }, refetch] = useQuery({
    query: ServerToolsQuery,
    variables: { serverId },
    requestPolicy: 'network-only',
  });
  if (error) return <ErrorAlert error={error} />;
  if (!data) return fetching ? <Loader size="sm" aria-label="Loading tools" /> : null;
  const reload = () => refetch({ requestPolicy: 'network-only' });
  return (
    <Stack gap="md">
      <Title order={3} size="h5">
        Pending definition changes
      </Title>
      {data.toolDefinitionChanges.length === 0 ? (
        <Text size="sm" c="dimmed">
          No tool of this server is held.
        </Text>
      ) : (
        data.toolDefinitionChanges.map((change) => (
          <PendingChange key={change.toolName} change={change} onApproved={reload} />
        ))
      )}
      <Title order={3} size="h5">
        Tool definitions
      </Title>
      {data.toolDefinitions.length === 0 ? (
        <Alert color="gray">
          No tools learnt yet: the gateway pins a server's tools when its tools/list answers.
        </Alert>
      ) : (
        <Table aria-label={`Tools of ${serverId}`} verticalSpacing="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Tool</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Approved by</Table.Th>
              <Table.Th>Observed digest</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {data.toolDefinitions.map((definition) => (
              <Table.Tr key={definition.toolName}>
                <Table.Td>{definition.toolName}</Table.Td>
                <Table.Td>
                  <StatusBadge definition={definition} />
                </Table.Td>
                <Table.Td>{definition.approvedBy ?? '—'}</Table.Td>
                <Table.Td>
                  <Code>{definition.observedDigest.slice(0, 19)}…</Code>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

export function ServerToolsDrawer({
  serverId,
  onClose,
}: {
  serverId: string | null;
  onClose(): void;
}) {
  return (
    <Drawer
      opened={serverId !== null}
      onClose={onClose}
      position="right"
      size="xl"
      title={serverId ? `Tools of ${serverId}` : 'Tools'}
    >
      {serverId ? <ToolsOfServer serverId={serverId} /> : null}
    </Drawer>
  );
}
