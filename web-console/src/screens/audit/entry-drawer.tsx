// One entry in full: every field (its agent, actor and resource by name with their full ids to
// copy), the metadata as pretty JSON, and its place in the hash chain — its own hash and the
// hash of the entry before it (which opens that entry when it is loaded), and the entry after it
// when that one is loaded. On a narrow screen this is where the columns the table leaves out are.
import { Anchor, Code, Drawer, Stack, Table, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { CopyableValue } from '../../components/copyable-value.tsx';
import { DecisionBadge } from './decision-badge.tsx';
import { actorTypeOf, decisionOf, GENESIS_HASH, reasonCodeOf, toolOf } from './entry-fields.ts';
import type { AuditEntry, AuditSubject } from './queries.ts';
import { kindLabel } from './subject.tsx';

function ChainLinks({
  entry,
  loaded,
  onOpen,
}: {
  entry: AuditEntry;
  loaded: readonly AuditEntry[];
  onOpen(entry: AuditEntry): void;
}) {
  const previous = loaded.find((other) => other.hash === entry.prevHash);
  const next = loaded.find((other) => other.prevHash === entry.hash);
  return (
    <Stack gap="xs">
      <Title order={3} size="h5">
        Hash chain
      </Title>
      <Text size="sm" fw={500}>
        This entry's hash
      </Text>
      <CopyableValue label="Entry hash" value={entry.hash} />
      <Text size="sm" fw={500}>
        Previous entry's hash
      </Text>
      <CopyableValue label="Previous hash" value={entry.prevHash} />
      {entry.prevHash === GENESIS_HASH ? (
        <Text size="sm" c="dimmed">
          The first entry of the tenant's chain: it links to no earlier entry.
        </Text>
      ) : previous ? (
        <Anchor component="button" type="button" size="sm" onClick={() => onOpen(previous)}>
          Open previous entry (#{previous.seq}, {previous.action})
        </Anchor>
      ) : (
        <Text size="sm" c="dimmed">
          The previous entry is not loaded (load more, or widen the filters, to open it).
        </Text>
      )}
      {next ? (
        <Anchor component="button" type="button" size="sm" onClick={() => onOpen(next)}>
          Open next entry (#{next.seq}, {next.action})
        </Anchor>
      ) : null}
    </Stack>
  );
}

/** A subject by name (or kind, without one) above its full id to copy. */
function SubjectValue({ name, subject }: { name: string; subject: AuditSubject }) {
  return (
    <Stack gap={2}>
      <Text size="sm" fw={subject.name !== null ? 500 : undefined}>
        {subject.name ?? `${kindLabel(subject.kind)} (no name: deleted or unknown here)`}
      </Text>
      <CopyableValue label={`${name} id`} value={subject.id} />
    </Stack>
  );
}

function entryRows(entry: AuditEntry): [string, ReactNode][] {
  const decision = decisionOf(entry);
  const tool = toolOf(entry);
  const reasonCode = reasonCodeOf(entry);
  const actorType = actorTypeOf(entry);
  const rows: [string, ReactNode][] = [
    ['Id', entry.id],
    ['Position', entry.seq],
    ['Time (UTC)', entry.createdAt],
    ['Action', entry.action],
  ];
  if (decision) rows.push(['Decision', <DecisionBadge key="decision" decision={decision} />]);
  if (entry.agent) {
    rows.push(['Agent', <SubjectValue key="agent" name="Agent" subject={entry.agent} />]);
  }
  if (tool) rows.push(['Tool', tool]);
  if (reasonCode) rows.push(['Reason code', reasonCode]);
  if (entry.actor) {
    rows.push(['Actor', <SubjectValue key="actor" name="Actor" subject={entry.actor} />]);
  } else if (actorType) {
    rows.push(['Actor', actorType]);
  }
  rows.push(['Resource type', entry.resourceType]);
  if (entry.resourceName) rows.push(['Resource name', entry.resourceName]);
  rows.push(['Resource id', entry.resourceId || '—']);
  return rows;
}

export function EntryDrawer({
  entry,
  loaded,
  onOpen,
  onClose,
}: {
  entry: AuditEntry | null;
  loaded: readonly AuditEntry[];
  onOpen(entry: AuditEntry): void;
  onClose(): void;
}) {
  const rows: [string, ReactNode][] = entry ? entryRows(entry) : [];
  return (
    <Drawer
      opened={entry !== null}
      onClose={onClose}
      position="right"
      size="lg"
      title={entry ? `Audit entry #${entry.seq}` : 'Audit entry'}
    >
      {entry ? (
        <Stack gap="md">
          <Table withRowBorders={false} verticalSpacing={4} aria-label="Entry fields">
            <Table.Tbody>
              {rows.map(([name, value]) => (
                <Table.Tr key={name}>
                  <Table.Th w={140}>{name}</Table.Th>
                  <Table.Td style={{ wordBreak: 'break-all' }}>{value}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Stack gap="xs">
            <Title order={3} size="h5">
              Metadata
            </Title>
            <Code block aria-label="Metadata">
              {JSON.stringify(entry.metadata, null, 2)}
            </Code>
          </Stack>
          <ChainLinks entry={entry} loaded={loaded} onOpen={onOpen} />
        </Stack>
      ) : null}
    </Drawer>
  );
}
