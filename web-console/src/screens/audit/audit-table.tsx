// The entries as a table, newest first. A row opens the entry's detail; the time is the row's
// button so the keyboard reaches every entry. Agents and actors show by name above their ids. On
// a narrow screen (below Mantine's `sm`) the table keeps the columns that say what happened —
// time, decision, agent, tool — and the rest are in the row's detail.
import { Anchor, Code, Stack, Table, Text, useMatches } from '@mantine/core';
import { DecisionBadge } from './decision-badge.tsx';
import {
  actorTypeOf,
  decisionOf,
  formatClock,
  formatDate,
  reasonCodeOf,
  toolOf,
} from './entry-fields.ts';
import type { AuditEntry } from './queries.ts';
import { SubjectCell } from './subject.tsx';

/** The time of day above the date, so the column stays narrow; the full instant is in the detail. */
function TimeCell({ entry, onOpen }: { entry: AuditEntry; onOpen(entry: AuditEntry): void }) {
  return (
    <Anchor
      component="button"
      type="button"
      size="sm"
      onClick={() => onOpen(entry)}
      aria-label={`Entry ${entry.seq}: ${entry.action} at ${entry.createdAt}`}
      style={{ whiteSpace: 'nowrap', textAlign: 'left' }}
      data-entry-time
    >
      <Stack gap={0}>
        <span>{formatClock(entry.createdAt)}</span>
        <Text span size="xs" c="dimmed">
          {formatDate(entry.createdAt)}
        </Text>
      </Stack>
    </Anchor>
  );
}

/** The resource's kind above its name, or its id (visually shortened, copied in full). */
function ResourceCell({ entry }: { entry: AuditEntry }) {
  return (
    <Stack gap={0} miw={0}>
      <Text size="xs" c="dimmed">
        {entry.resourceType}
      </Text>
      {entry.resourceName !== null ? (
        <Text size="sm">{entry.resourceName}</Text>
      ) : (
        <Text size="xs" ff="monospace" truncate="end" maw={110} title={entry.resourceId}>
          {entry.resourceId || '—'}
        </Text>
      )}
    </Stack>
  );
}

function Dash() {
  return (
    <Text size="sm" c="dimmed">
      —
    </Text>
  );
}

export function AuditTable({
  entries,
  onOpen,
}: {
  entries: readonly AuditEntry[];
  onOpen(entry: AuditEntry): void;
}) {
  const narrow = useMatches({ base: true, sm: false });
  const wide = !narrow;
  return (
    <Table.ScrollContainer minWidth={narrow ? 0 : 1000}>
      <Table
        striped
        highlightOnHover
        aria-label="Audit entries"
        verticalSpacing="xs"
        horizontalSpacing={narrow ? 6 : 'sm'}
      >
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Time</Table.Th>
            {wide ? <Table.Th>Action</Table.Th> : null}
            <Table.Th>Decision</Table.Th>
            <Table.Th>Agent</Table.Th>
            <Table.Th>Tool</Table.Th>
            {wide ? (
              <>
                <Table.Th>Resource</Table.Th>
                <Table.Th>Reason code</Table.Th>
                <Table.Th>Actor</Table.Th>
              </>
            ) : null}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {entries.map((entry) => {
            const decision = decisionOf(entry);
            const reasonCode = reasonCodeOf(entry);
            const tool = toolOf(entry);
            return (
              <Table.Tr key={entry.id} data-entry-id={entry.id}>
                <Table.Td>
                  <TimeCell entry={entry} onOpen={onOpen} />
                </Table.Td>
                {wide ? (
                  <Table.Td>
                    <Code>{entry.action}</Code>
                  </Table.Td>
                ) : null}
                <Table.Td>{decision ? <DecisionBadge decision={decision} /> : <Dash />}</Table.Td>
                <Table.Td data-column="agent">
                  <SubjectCell subject={entry.agent} idWidth={narrow ? 80 : 110} />
                </Table.Td>
                <Table.Td style={{ overflowWrap: 'break-word' }}>
                  {tool ? <Code>{tool}</Code> : <Dash />}
                </Table.Td>
                {wide ? (
                  <>
                    <Table.Td>
                      <ResourceCell entry={entry} />
                    </Table.Td>
                    <Table.Td>{reasonCode ? <Code>{reasonCode}</Code> : null}</Table.Td>
                    <Table.Td data-column="actor">
                      <SubjectCell subject={entry.actor} fallback={actorTypeOf(entry) ?? '—'} />
                    </Table.Td>
                  </>
                ) : null}
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
