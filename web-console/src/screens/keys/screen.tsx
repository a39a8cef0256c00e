// The API keys screen: the tenant's keys with their scopes, dates and state; create one (its
// secret shown once) and revoke one. Every operation here needs keys:manage, reading included, and
// a key only grants or revokes scopes it holds itself (control-plane/services/api-keys.ts).
import { Button, Code, Group, Loader, Stack, Switch, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconPlus } from '@tabler/icons-react';
import { useState } from 'react';
import { useQuery } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { RequireScope } from '../../components/require-scope.tsx';
import { useSession } from '../../session/session.tsx';
import { CreateKeyDialog } from './create-key-dialog.tsx';
import { KeyTable } from './key-table.tsx';
import { type ApiKey, ApiKeysQuery } from './queries.ts';
import { RevokeKeyDialog } from './revoke-key-dialog.tsx';

function KeysView() {
  const { viewer } = useSession();
  const [{ data, error, fetching }, refetch] = useQuery({ query: ApiKeysQuery });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const [creating, setCreating] = useState(false);
  const [showRevoked, setShowRevoked] = useState(false);
  // The key stays while the dialog closes, so its content does not change as it fades.
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [revokeOpen, setRevokeOpen] = useState(false);

  const keys = data?.apiKeys ?? [];
  const shown = showRevoked ? keys : keys.filter((key) => !key.revokedAt);
  const revokedCount = keys.filter((key) => key.revokedAt).length;

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          Keys for <Code>Authorization: Bearer …</Code> on the REST and GraphQL APIs and for this
          console. Only a hash is stored: a key's secret is shown once, when it is created.
        </Text>
        <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)}>
          Create key
        </Button>
      </Group>
      <Switch
        label={`Show revoked keys (${revokedCount})`}
        checked={showRevoked}
        onChange={(event) => setShowRevoked(event.currentTarget.checked)}
      />
      {error ? <ErrorAlert error={error} title="The keys could not be read" /> : null}
      {!data && fetching ? <Loader size="sm" aria-label="Loading keys" /> : null}
      {data ? (
        <KeyTable
          keys={shown}
          signedInKeyId={viewer.apiKeyId}
          onRevoke={(key) => {
            setRevoking(key);
            setRevokeOpen(true);
          }}
        />
      ) : null}
      <CreateKeyDialog
        opened={creating}
        onClose={() => setCreating(false)}
        onCreated={() => reload()}
      />
      <RevokeKeyDialog
        opened={revokeOpen}
        apiKey={revoking}
        onClose={() => setRevokeOpen(false)}
        onRevoked={(key) => {
          notifications.show({ message: `${key.name} revoked` });
          setRevokeOpen(false);
          reload();
        }}
      />
    </Stack>
  );
}

function KeysScreen() {
  return (
    <Stack gap="md">
      <Title order={2}>API keys</Title>
      <RequireScope scope="keys:manage" to="list, create and revoke the tenant's API keys">
        <KeysView />
      </RequireScope>
    </Stack>
  );
}

export default KeysScreen;
