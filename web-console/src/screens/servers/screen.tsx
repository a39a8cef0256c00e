// The MCP servers screen: the tenant's upstream servers with what the gateway learnt of their
// tools; register, edit (url, mock results) and remove them; review and approve tool definitions
// an upstream changed. Every operation here needs policies:manage, reading included.
import { Button, Group, Loader, Stack, Text, Title } from '@mantine/core';
import { modals } from '@mantine/modals';
import { notifications } from '@mantine/notifications';
import { IconPlus } from '@tabler/icons-react';
import { useCallback, useEffect, useState } from 'react';
import { useClient, useMutation, useQuery } from 'urql';
import { apiProblem, ErrorAlert } from '../../components/error-alert.tsx';
import { RequireScope } from '../../components/require-scope.tsx';
import {
  type McpServer,
  McpServersQuery,
  RemoveMcpServerMutation,
  ToolDefinitionEventsSubscription,
} from './queries.ts';
import { ServerFormModal } from './server-form.tsx';
import { ServerTable } from './server-table.tsx';
import { ServerToolsDrawer } from './server-tools.tsx';

function ServersView() {
  const [{ data, error, fetching }, refetch] = useQuery({ query: McpServersQuery });
  const [, remove] = useMutation(RemoveMcpServerMutation);
  // The form's server stays while the modal closes, so its content does not change as it fades.
  const [formOpen, setFormOpen] = useState(false);
  const [formServer, setFormServer] = useState<McpServer | null>(null);
  const openForm = (server: McpServer | null) => {
    setFormServer(server);
    setFormOpen(true);
  };
  const [toolsOf, setToolsOf] = useState<string | null>(null);
  const reload = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);
  const client = useClient();
  // A tool an upstream changed (or an operator approved) changes the held counts: read them again.
  useEffect(() => {
    const subscription = client
      .subscription(ToolDefinitionEventsSubscription, {})
      .subscribe((event) => {
        if (event.data) reload();
      });
    return () => subscription.unsubscribe();
  }, [client, reload]);
  const held = new Map<string, number>();
  for (const change of data?.toolDefinitionChanges ?? []) {
    held.set(change.serverId, (held.get(change.serverId) ?? 0) + 1);
  }

  const confirmRemove = (server: McpServer) =>
    modals.openConfirmModal({
      title: `Remove ${server.serverId}?`,
      children: (
        <Text size="sm">
          Calls to mcp://{server.serverId} are denied from the next inspect on. Its mock results and
          learnt tools go with it.
        </Text>
      ),
      labels: { confirm: 'Remove', cancel: 'Cancel' },
      confirmProps: { color: 'red' },
      onConfirm: async () => {
        const result = await remove({ serverId: server.serverId });
        if (result.error) {
          const problem = apiProblem(result.error);
          notifications.show({ color: 'red', title: 'Not removed', message: problem.message });
          return;
        }
        notifications.show({ message: `${server.serverId} removed` });
        reload();
      },
    });

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          Where production calls to mcp://&lt;server id&gt; go, and what simulation mode answers.
        </Text>
        <Button leftSection={<IconPlus size={16} />} onClick={() => openForm(null)}>
          Register server
        </Button>
      </Group>
      {error ? <ErrorAlert error={error} title="The servers could not be read" /> : null}
      {!data && fetching ? <Loader size="sm" aria-label="Loading servers" /> : null}
      {data && data.mcpServers.length === 0 ? (
        <Text c="dimmed">No MCP server is registered yet.</Text>
      ) : null}
      {data && data.mcpServers.length > 0 ? (
        <ServerTable
          servers={data.mcpServers}
          held={held}
          onTools={(server) => setToolsOf(server.serverId)}
          onEdit={openForm}
          onRemove={confirmRemove}
        />
      ) : null}
      <ServerFormModal
        opened={formOpen}
        server={formServer}
        onClose={() => setFormOpen(false)}
        onSaved={(serverId) => {
          notifications.show({ color: 'green', message: `${serverId} saved` });
          setFormOpen(false);
          reload();
        }}
      />
      <ServerToolsDrawer serverId={toolsOf} onClose={() => setToolsOf(null)} />
    </Stack>
  );
}

function ServersScreen() {
  return (
    <Stack gap="md">
      <Title order={2}>MCP servers</Title>
      <RequireScope scope="policies:manage" to="list, register and change MCP servers">
        <ServersView />
      </RequireScope>
    </Stack>
  );
}

export default ServersScreen;
