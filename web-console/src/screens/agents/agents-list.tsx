// The tenant's agents: status filter (asked of the API), role filter and name search (over the
// loaded pages), each agent's status, creation and public key; live by agentEvents. Spawning
// starts here; the detail (and the kill) is one click away.
import {
  Anchor,
  Button,
  Group,
  Loader,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconPlus, IconSearch } from '@tabler/icons-react';
import { useMemo, useState } from 'react';
import { Link } from 'wouter';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { CopyValue } from './copy-value.tsx';
import { SpawnAgentDrawer } from './spawn-agent-drawer.tsx';
import { AgentStatusBadge } from './status-badge.tsx';
import { useAgentList } from './use-agent-list.ts';

const STATUS_FILTERS = [
  { label: 'All', value: 'all' },
  { label: 'Active', value: 'active' },
  { label: 'Killed', value: 'killed' },
];

export function AgentsList() {
  const [status, setStatus] = useState('all');
  const [role, setRole] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [spawning, spawn] = useDisclosure(false);
  const list = useAgentList(status === 'all' ? null : status);

  const roles = useMemo(
    () => [...new Set(list.agents.map((agent) => agent.role))].sort(),
    [list.agents],
  );
  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    return list.agents
      .filter((agent) => role === null || agent.role === role)
      .filter((agent) => needle === '' || agent.name.toLowerCase().includes(needle))
      .toSorted((a, b) => b.createdAt.localeCompare(a.createdAt));
  }, [list.agents, role, search]);
  const activeAgents = useMemo(
    () => list.agents.filter((agent) => agent.status === 'active'),
    [list.agents],
  );

  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-end">
        <Title order={2}>Agents</Title>
        <Button leftSection={<IconPlus size={16} />} onClick={spawn.open}>
          Spawn agent
        </Button>
      </Group>
      <Group align="flex-end" gap="sm">
        <TextInput
          label="Search by name"
          placeholder="name contains…"
          leftSection={<IconSearch size={16} />}
          value={search}
          onChange={(event) => setSearch(event.currentTarget.value)}
        />
        <Select
          label="Role"
          placeholder="Any role"
          clearable
          // Mantine hides its clear button from assistive tech and the tab order; this one is
          // the filter's only reset, so it is a named, focusable button.
          clearButtonProps={{
            'aria-label': 'Clear the role filter',
            'aria-hidden': false,
            tabIndex: 0,
          }}
          data={roles}
          value={role}
          onChange={setRole}
        />
        <Stack gap={4}>
          <Text size="sm" fw={500} id="agents-status-filter">
            Status
          </Text>
          <SegmentedControl
            aria-labelledby="agents-status-filter"
            data={STATUS_FILTERS}
            value={status}
            onChange={setStatus}
          />
        </Stack>
        {list.fetching ? <Loader size="sm" aria-label="Loading agents" /> : null}
      </Group>
      {list.error ? <ErrorAlert error={list.error} title="The agents could not be loaded" /> : null}
      <Table striped highlightOnHover aria-label="Agents">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Role</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Public key</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {shown.map((agent) => (
            <Table.Tr key={agent.id}>
              <Table.Td>
                <Anchor component={Link} href={`/${agent.id}`}>
                  {agent.name}
                </Anchor>
              </Table.Td>
              <Table.Td>{agent.role}</Table.Td>
              <Table.Td>
                <AgentStatusBadge status={agent.status} />
              </Table.Td>
              <Table.Td>{new Date(agent.createdAt).toLocaleString()}</Table.Td>
              <Table.Td>
                <CopyValue value={agent.publicKey} label={`public key of ${agent.name}`} short />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          {shown.length} shown of {list.agents.length} loaded
          {list.hasNextPage ? ' (more on the server)' : ''}. Role and search filter the loaded
          agents.
        </Text>
        {list.hasNextPage ? (
          <Button variant="default" onClick={list.loadMore} loading={list.fetching}>
            Load more agents
          </Button>
        ) : null}
      </Group>
      <SpawnAgentDrawer opened={spawning} onClose={spawn.close} parents={activeAgents} />
    </Stack>
  );
}
