// Published NPL versions, one table per policy name (newest first as the API orders them), with
// the tenant's pins marked: view a version's text, start a new version from it, pin or unpin it.
import {
  ActionIcon,
  Badge,
  Button,
  Code,
  CopyButton,
  Group,
  Modal,
  Paper,
  ScrollArea,
  Stack,
  Table,
  Text,
  Title,
  Tooltip,
} from '@mantine/core';
import {
  IconCheck,
  IconCopy,
  IconEye,
  IconPencil,
  IconPin,
  IconPinnedOff,
} from '@tabler/icons-react';
import { useState } from 'react';
import { useMutation } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import type { ResultOf } from '../../graphql.ts';
import { PinPolicyMutation, type PolicyVersionsQuery, UnpinPolicyMutation } from './operations.ts';

export type PolicyVersion = ResultOf<typeof PolicyVersionsQuery>['nplPolicyVersions'][number];

function groupByName(versions: readonly PolicyVersion[]): [string, PolicyVersion[]][] {
  const groups = new Map<string, PolicyVersion[]>();
  for (const version of versions) {
    const group = groups.get(version.name) ?? [];
    group.push(version);
    groups.set(version.name, group);
  }
  return [...groups.entries()];
}

export function PolicyVersions({
  versions,
  pinned,
  onEdit,
  onChanged,
}: {
  versions: readonly PolicyVersion[];
  pinned: readonly string[];
  onEdit: (version: PolicyVersion) => void;
  onChanged: () => void;
}) {
  const [viewing, setViewing] = useState<PolicyVersion | null>(null);
  const [pinning, pin] = useMutation(PinPolicyMutation);
  const [unpinning, unpin] = useMutation(UnpinPolicyMutation);
  const pins = new Set(pinned);
  const toggle = async (version: PolicyVersion) => {
    const result = pins.has(version.uri)
      ? await unpin({ uri: version.uri })
      : await pin({ uri: version.uri });
    if (!result.error) onChanged();
  };
  const error = pinning.error ?? unpinning.error;

  if (versions.length === 0) {
    return <Text c="dimmed">No policy is published in this tenant yet.</Text>;
  }
  return (
    <Stack gap="md">
      {error ? <ErrorAlert error={error} /> : null}
      {groupByName(versions).map(([name, group]) => (
        <Paper key={name} withBorder p="md">
          <Title order={3} size="h4" mb="xs">
            {name}
          </Title>
          <Table aria-label={`Versions of ${name}`} verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Version</Table.Th>
                <Table.Th>Content hash</Table.Th>
                <Table.Th>Published</Table.Th>
                <Table.Th>Pinned</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {group.map((version) => {
                const isPinned = pins.has(version.uri);
                return (
                  <Table.Tr key={version.id}>
                    <Table.Td>
                      <Code>{version.version}</Code>
                    </Table.Td>
                    <Table.Td>
                      <Group gap={4} wrap="nowrap">
                        <Code title={version.contentHash}>{version.contentHash.slice(0, 12)}…</Code>
                        <CopyButton value={version.contentHash}>
                          {({ copied, copy }) => (
                            <Tooltip label={copied ? 'Copied' : 'Copy content hash'}>
                              <ActionIcon
                                variant="subtle"
                                color="gray"
                                aria-label={`Copy content hash of ${version.uri}`}
                                onClick={copy}
                              >
                                {copied ? <IconCheck size={14} /> : <IconCopy size={14} />}
                              </ActionIcon>
                            </Tooltip>
                          )}
                        </CopyButton>
                      </Group>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">{new Date(version.publishedAt).toLocaleString()}</Text>
                      {version.publishedBy ? (
                        <Text size="xs" c="dimmed">
                          {version.publishedBy}
                        </Text>
                      ) : null}
                    </Table.Td>
                    <Table.Td>
                      {isPinned ? (
                        <Badge color="teal" variant="light" leftSection={<IconPin size={12} />}>
                          pinned
                        </Badge>
                      ) : null}
                    </Table.Td>
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        <Button
                          size="xs"
                          variant="default"
                          leftSection={<IconEye size={14} />}
                          onClick={() => setViewing(version)}
                          aria-label={`View source of ${version.uri}`}
                        >
                          Source
                        </Button>
                        <Button
                          size="xs"
                          variant="default"
                          leftSection={<IconPencil size={14} />}
                          onClick={() => onEdit(version)}
                          aria-label={`Edit ${version.uri} as a new version`}
                        >
                          Edit as new version
                        </Button>
                        <Button
                          size="xs"
                          variant={isPinned ? 'light' : 'filled'}
                          color={isPinned ? 'gray' : undefined}
                          leftSection={
                            isPinned ? <IconPinnedOff size={14} /> : <IconPin size={14} />
                          }
                          loading={pinning.fetching || unpinning.fetching}
                          onClick={() => toggle(version)}
                          aria-label={`${isPinned ? 'Unpin' : 'Pin'} ${version.uri}`}
                        >
                          {isPinned ? 'Unpin' : 'Pin'}
                        </Button>
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Paper>
      ))}
      <Modal
        opened={viewing !== null}
        onClose={() => setViewing(null)}
        title={viewing ? `Source of ${viewing.uri}` : ''}
        size="xl"
      >
        <ScrollArea.Autosize mah="70vh">
          <Code block>{viewing?.source}</Code>
        </ScrollArea.Autosize>
      </Modal>
    </Stack>
  );
}
