// Published NPL versions, one table per policy name (oldest first, as the API orders them), with
// the tenant's pins marked: view a version's text, start a new version from it, pin or unpin it.
// Every pinned version decides and the most restrictive decision wins, so pinning a version of a
// policy that has a pinned version offers to replace that one (an upgrade, in one change) before
// pinning beside it, and says why where the choice is made.
import {
  ActionIcon,
  Badge,
  Button,
  Code,
  CopyButton,
  Group,
  Menu,
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
  IconChevronDown,
  IconCopy,
  IconEye,
  IconPencil,
  IconPin,
  IconPinnedOff,
  IconReplace,
} from '@tabler/icons-react';
import { useState } from 'react';
import { useMutation } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import type { ResultOf } from '../../graphql.ts';
import { PinPolicyMutation, type PolicyVersionsQuery, UnpinPolicyMutation } from './operations.ts';

export type PolicyVersion = ResultOf<typeof PolicyVersionsQuery>['nplPolicyVersions'][number];

/** The versions of each policy name, in the API's order, and those of them that are pinned. */
function groupByName(
  versions: readonly PolicyVersion[],
  pins: ReadonlySet<string>,
): [string, PolicyVersion[], PolicyVersion[]][] {
  const groups = new Map<string, PolicyVersion[]>();
  for (const version of versions) {
    const group = groups.get(version.name) ?? [];
    group.push(version);
    groups.set(version.name, group);
  }
  return [...groups].map(([name, group]) => [
    name,
    group,
    group.filter((version) => pins.has(version.uri)),
  ]);
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
  const change = async (run: () => Promise<{ error?: unknown }>) => {
    if (!(await run()).error) onChanged();
  };
  const pinIt = (version: PolicyVersion, replaces?: PolicyVersion) =>
    change(() => pin({ uri: version.uri, replaces: replaces?.uri ?? null }));
  const unpinIt = (version: PolicyVersion) => change(() => unpin({ uri: version.uri }));
  const busy = pinning.fetching || unpinning.fetching;
  const error = pinning.error ?? unpinning.error;

  if (versions.length === 0) {
    return <Text c="dimmed">No policy is published in this tenant yet.</Text>;
  }
  return (
    <Stack gap="md">
      {error ? <ErrorAlert error={error} /> : null}
      {groupByName(versions, pins).map(([name, group, pinnedHere]) => (
        <Paper key={name} withBorder p="md">
          <Title order={3} size="h4" mb="xs">
            {name}
          </Title>
          {pinnedHere.length > 0 ? (
            <Text size="sm" c="dimmed" mb="xs">
              {PIN_SEMANTICS} Pinning another version of {name} replaces{' '}
              {pinnedHere[pinnedHere.length - 1]?.version} by default, so that its rules stop
              deciding.
            </Text>
          ) : null}
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
                        {isPinned ? (
                          <Button
                            size="xs"
                            variant="light"
                            color="gray"
                            leftSection={<IconPinnedOff size={14} />}
                            loading={busy}
                            onClick={() => unpinIt(version)}
                            aria-label={`Unpin ${version.uri}`}
                          >
                            Unpin
                          </Button>
                        ) : pinnedHere.length > 0 ? (
                          <PinChoice
                            version={version}
                            pinned={pinnedHere}
                            busy={busy}
                            onPin={pinIt}
                          />
                        ) : (
                          <Button
                            size="xs"
                            leftSection={<IconPin size={14} />}
                            loading={busy}
                            onClick={() => pinIt(version)}
                            aria-label={`Pin ${version.uri}`}
                          >
                            Pin
                          </Button>
                        )}
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

const PIN_SEMANTICS =
  'Every pinned policy is evaluated on every inspect; the most restrictive decision wins.';

/**
 * Pinning a version of a policy with pinned versions: replacing the newest pinned one is the
 * default (an upgrade that keeps the old version pinned would keep enforcing its rules); the
 * menu offers replacing another, or pinning beside them.
 */
function PinChoice({
  version,
  pinned,
  busy,
  onPin,
}: {
  version: PolicyVersion;
  pinned: readonly PolicyVersion[];
  busy: boolean;
  onPin: (version: PolicyVersion, replaces?: PolicyVersion) => void;
}) {
  const replaced = pinned[pinned.length - 1] as PolicyVersion;
  return (
    <Group gap={2} wrap="nowrap">
      <Tooltip
        label={`Unpins ${replaced.version} and pins ${version.version} in one change. ${PIN_SEMANTICS}`}
        multiline
        w={280}
      >
        <Button
          size="xs"
          leftSection={<IconReplace size={14} />}
          loading={busy}
          onClick={() => onPin(version, replaced)}
          aria-label={`Pin ${version.uri} in place of ${replaced.uri}`}
        >
          Replace {replaced.version}
        </Button>
      </Tooltip>
      <Menu position="bottom-end" withinPortal>
        <Menu.Target>
          <ActionIcon size={30} disabled={busy} aria-label={`Other ways to pin ${version.uri}`}>
            <IconChevronDown size={14} />
          </ActionIcon>
        </Menu.Target>
        <Menu.Dropdown maw={320}>
          <Menu.Label>{PIN_SEMANTICS}</Menu.Label>
          {pinned
            .filter((other) => other !== replaced)
            .map((other) => (
              <Menu.Item
                key={other.uri}
                leftSection={<IconReplace size={14} />}
                onClick={() => onPin(version, other)}
              >
                Replace {other.version}
              </Menu.Item>
            ))}
          <Menu.Item leftSection={<IconPin size={14} />} onClick={() => onPin(version)}>
            Pin beside {pinned.length === 1 ? 'it' : 'them'}
          </Menu.Item>
        </Menu.Dropdown>
      </Menu>
    </Group>
  );
}
