// The tenant's API keys, one row each: name and public prefix, scopes, dates (created, expires,
// last used) and state. The key the console is signed in with is marked; an active key has a
// revoke action.
import { ActionIcon, Badge, Code, Group, Stack, Table, Text, Tooltip } from '@mantine/core';
import { IconKeyOff } from '@tabler/icons-react';
import type { ApiKey } from './queries.ts';

export type KeyState = 'active' | 'expired' | 'revoked';

export function keyState(key: ApiKey, now = Date.now()): KeyState {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && new Date(key.expiresAt).getTime() <= now) return 'expired';
  return 'active';
}

const STATE_COLOR: Record<KeyState, string> = { active: 'teal', expired: 'gray', revoked: 'red' };
// A badge's label may shrink to an ellipsis (a flex item that hides its overflow); in a table
// column squeezed by the scopes beside it, the state would read "AC…". It keeps its width.
const WHOLE_LABEL = { label: { overflow: 'visible' } } as const;

function When({ at, none }: { at: string | null; none: string }) {
  return <Text size="sm">{at ? new Date(at).toLocaleString() : none}</Text>;
}

export function KeyTable({
  keys,
  signedInKeyId,
  onRevoke,
}: {
  keys: readonly ApiKey[];
  /** The key the console is signed in with. */
  signedInKeyId: string;
  onRevoke(key: ApiKey): void;
}) {
  return (
    <Table.ScrollContainer minWidth={900}>
      <Table aria-label="API keys" striped verticalSpacing="sm">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Scopes</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Expires</Table.Th>
            <Table.Th>Last used</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th>Actions</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {keys.map((key) => {
            const state = keyState(key);
            return (
              <Table.Tr key={key.id} data-key-id={key.id}>
                <Table.Td>
                  <Stack gap={2}>
                    <Group gap={6} wrap="nowrap">
                      <Text fw={600} size="sm">
                        {key.name}
                      </Text>
                      {key.id === signedInKeyId ? (
                        <Badge size="xs" variant="outline">
                          signed in
                        </Badge>
                      ) : null}
                    </Group>
                    <Code title="The key's public prefix: agk_<prefix>_…">{`agk_${key.prefix}_…`}</Code>
                  </Stack>
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    {key.scopes.map((scope) => (
                      <Badge key={scope} variant="light" tt="none" size="sm" styles={WHOLE_LABEL}>
                        {scope}
                      </Badge>
                    ))}
                  </Group>
                </Table.Td>
                <Table.Td>
                  <When at={key.createdAt} none="—" />
                </Table.Td>
                <Table.Td>
                  <When at={key.expiresAt} none="never" />
                </Table.Td>
                <Table.Td>
                  <When at={key.lastUsedAt} none="never" />
                </Table.Td>
                <Table.Td>
                  <Badge color={STATE_COLOR[state]} variant="light" styles={WHOLE_LABEL}>
                    {state}
                  </Badge>
                  {key.revokedAt ? (
                    <Text size="xs" c="dimmed">
                      {new Date(key.revokedAt).toLocaleString()}
                    </Text>
                  ) : null}
                </Table.Td>
                <Table.Td>
                  {state === 'revoked' ? null : (
                    <Tooltip label={`Revoke ${key.name}`}>
                      <ActionIcon
                        variant="subtle"
                        color="red"
                        aria-label={`Revoke ${key.name}`}
                        onClick={() => onRevoke(key)}
                      >
                        <IconKeyOff size={16} />
                      </ActionIcon>
                    </Tooltip>
                  )}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
