// The entries as a table, newest first. A row opens the entry's detail; the time is the row's
// button so the keyboard reaches every entry.
import { Anchor, Badge, Code, Table, Text } from '@mantine/core';
import { actorOf, decisionColor, decisionOf, formatTime, reasonCodeOf } from './entry-fields.ts';
import type { AuditEntry } from './queries.ts';

export function AuditTable({
  entries,
  onOpen,
}: {
  entries: readonly AuditEntry[];
  onOpen(entry: AuditEntry): void;
}) {
  return (
    <Table.ScrollContainer minWidth={900}>
      <Table striped highlightOnHover aria-label="Audit entries" verticalSpacing="xs">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Time</Table.Th>
            <Table.Th>Action</Table.Th>
            <Table.Th>Decision</Table.Th>
            <Table.Th>Agent / resource</Table.Th>
            <Table.Th>Reason code</Table.Th>
            <Table.Th>Actor</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {entries.map((entry) => {
            const decision = decisionOf(entry);
            const reasonCode = reasonCodeOf(entry);
            return (
              <Table.Tr key={entry.id} data-entry-id={entry.id}>
                <Table.Td style={{ whiteSpace: 'nowrap' }}>
                  <Anchor
                    component="button"
                    type="button"
                    size="sm"
                    onClick={() => onOpen(entry)}
                    aria-label={`Entry ${entry.seq}: ${entry.action} at ${entry.createdAt}`}
                  >
                    {formatTime(entry.createdAt)}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <Code>{entry.action}</Code>
                </Table.Td>
                <Table.Td>
                  {decision ? (
                    <Badge variant="light" color={decisionColor(decision)}>
                      {decision}
                    </Badge>
                  ) : (
                    <Text size="sm" c="dimmed">
                      —
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">
                    <Text span c="dimmed" size="sm">
                      {entry.resourceType}
                    </Text>{' '}
                    {entry.resourceId || '—'}
                  </Text>
                </Table.Td>
                <Table.Td>{reasonCode ? <Code>{reasonCode}</Code> : null}</Table.Td>
                <Table.Td>
                  <Text size="sm">{actorOf(entry) ?? '—'}</Text>
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
