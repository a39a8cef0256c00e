// The tenant's MCP servers, one row each: where calls go, what the last tools/list taught the
// gateway (or why it failed), and the actions on the server.

import { ActionIcon, Badge, Code, Group, Stack, Table, Text, Tooltip } from '@mantine/core';
import { IconEdit, IconTools, IconTrash } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import type { McpServer } from './queries.ts';

function toolCount(server: McpServer): number {
  const digests = server.toolDigests;
  return digests !== null && typeof digests === 'object' ? Object.keys(digests).length : 0;
}

function RefreshState({ server }: { server: McpServer }) {
  return (
    <Stack gap={2}>
      <Text size="sm">
        {server.toolsRefreshedAt
          ? new Date(server.toolsRefreshedAt).toLocaleString()
          : 'never learnt'}
      </Text>
      {server.toolsRefreshError ? (
        <Group gap={4} wrap="nowrap">
          <Badge color="red" variant="light" size="sm">
            refresh failed
          </Badge>
          <Text size="xs" c="red" lineClamp={2}>
            {server.toolsRefreshError}
          </Text>
        </Group>
      ) : null}
    </Stack>
  );
}

function RowAction({
  label,
  onClick,
  color,
  children,
}: {
  label: string;
  onClick(): void;
  color?: string;
  children: ReactNode;
}) {
  return (
    <Tooltip label={label}>
      <ActionIcon variant="subtle" color={color} aria-label={label} onClick={onClick}>
        {children}
      </ActionIcon>
    </Tooltip>
  );
}

export function ServerTable({
  servers,
  onTools,
  onEdit,
  onRemove,
  held,
}: {
  servers: readonly McpServer[];
  /** Held tools per serverId (definitions waiting for approval). */
  held: ReadonlyMap<string, number>;
  onTools(server: McpServer): void;
  onEdit(server: McpServer): void;
  onRemove(server: McpServer): void;
}) {
  return (
    <Table.ScrollContainer minWidth={860}>
      <Table aria-label="MCP servers" striped verticalSpacing="sm">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Server id</Table.Th>
            <Table.Th>URL</Table.Th>
            <Table.Th>Transport</Table.Th>
            <Table.Th>Tools</Table.Th>
            <Table.Th>Tools refreshed</Table.Th>
            <Table.Th>Actions</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {servers.map((server) => (
            <Table.Tr key={server.id} data-server-id={server.serverId}>
              <Table.Td>
                <Text fw={600} size="sm">
                  {server.serverId}
                </Text>
              </Table.Td>
              <Table.Td>
                <Code style={{ wordBreak: 'break-all' }}>{server.url}</Code>
              </Table.Td>
              <Table.Td>
                <Text size="sm">{server.transport.toLowerCase().replace('_', ' ')}</Text>
              </Table.Td>
              <Table.Td>
                <Group gap={6} wrap="nowrap">
                  <Text size="sm">{toolCount(server)}</Text>
                  {held.get(server.serverId) ? (
                    <Badge color="orange" variant="light" size="sm">
                      {held.get(server.serverId)} held
                    </Badge>
                  ) : null}
                </Group>
              </Table.Td>
              <Table.Td>
                <RefreshState server={server} />
              </Table.Td>
              <Table.Td>
                <Group gap={4} wrap="nowrap">
                  <RowAction label={`Tools of ${server.serverId}`} onClick={() => onTools(server)}>
                    <IconTools size={16} />
                  </RowAction>
                  <RowAction label={`Edit ${server.serverId}`} onClick={() => onEdit(server)}>
                    <IconEdit size={16} />
                  </RowAction>
                  <RowAction
                    label={`Remove ${server.serverId}`}
                    color="red"
                    onClick={() => onRemove(server)}
                  >
                    <IconTrash size={16} />
                  </RowAction>
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
