// One entry in full: every field, the metadata as pretty JSON, and its place in the hash chain —
// its own hash and the hash of the entry before it (which opens that entry when it is loaded),
// and the entry after it when that one is loaded.
import {
  ActionIcon,
  Anchor,
  Code,
  CopyButton,
  Drawer,
  Group,
  Stack,
  Table,
  Text,
  Title,
  Tooltip,
} from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import { GENESIS_HASH } from './entry-fields.ts';
import type { AuditEntry } from './queries.ts';

function HashValue({ label, hash }: { label: string; hash: string }) {
  return (
    <Group gap={4} wrap="nowrap" align="flex-start">
      <Code style={{ wordBreak: 'break-all' }} aria-label={label}>
        {hash}
      </Code>
      <CopyButton value={hash}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? 'Copied' : 'Copy'}>
            <ActionIcon variant="subtle" onClick={copy} aria-label={`Copy ${label.toLowerCase()}`}>
              {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}

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
      <HashValue label="Entry hash" hash={entry.hash} />
      <Text size="sm" fw={500}>
        Previous entry's hash
      </Text>
      <HashValue label="Previous hash" hash={entry.prevHash} />
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
  const rows: [string, string][] = entry
    ? [
        ['Id', entry.id],
        ['Position', entry.seq],
        ['Time (UTC)', entry.createdAt],
        ['Action', entry.action],
        ['Resource type', entry.resourceType],
        ['Resource id', entry.resourceId || '—'],
      ]
    : [];
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
