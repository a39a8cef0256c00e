// Revoking a key, after a confirmation: it stops working on its next request and its open
// subscriptions close. A key may only revoke keys whose scopes it holds itself, and the gateway's
// last live tenants:admin key cannot be revoked (API_KEY_LAST_ADMIN): the first is said before
// sending, the gateway's refusals are shown with its message and hint. Revoking the key the
// console is signed in with signs the console out.
import { Alert, Button, Code, Group, Modal, Stack, Text } from '@mantine/core';
import { IconKeyOff } from '@tabler/icons-react';
import { useMutation } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { useSession } from '../../session/session.tsx';
import { type ApiKey, RevokeApiKeyMutation } from './queries.ts';

function RevokeConfirmation({
  apiKey,
  onCancel,
  onRevoked,
}: {
  apiKey: ApiKey;
  onCancel(): void;
  onRevoked(): void;
}) {
  const session = useSession();
  const [state, revoke] = useMutation(RevokeApiKeyMutation);
  const lacking = apiKey.scopes.filter((scope) => !session.hasScope(scope));
  const own = apiKey.id === session.viewer.apiKeyId;

  const run = async () => {
    const result = await revoke({ id: apiKey.id });
    if (result.error) return;
    if (own) session.signOut();
    else onRevoked();
  };

  return (
    <Stack gap="sm">
      <Text size="sm">
        <strong>{apiKey.name}</strong> (<Code>{`agk_${apiKey.prefix}_…`}</Code>) stops working on
        its next request, and its open subscriptions are closed. This cannot be undone.
      </Text>
      {own ? (
        <Alert color="yellow" title="This is the key you are signed in with">
          The console signs out once it is revoked.
        </Alert>
      ) : null}
      {lacking.length > 0 ? (
        <Alert color="gray" title="Your key cannot revoke it">
          It holds{' '}
          {lacking.map((scope, i) => (
            <span key={scope}>
              {i > 0 ? ', ' : null}
              <Code>{scope}</Code>
            </span>
          ))}
          , which your key lacks: a key only revokes keys it could have created.
        </Alert>
      ) : null}
      {state.error ? (
        <ErrorAlert error={state.error} title="The gateway refused to revoke it" />
      ) : null}
      <Group justify="flex-end">
        <Button variant="default" onClick={onCancel}>
          Cancel
        </Button>
        <Button
          color="red"
          leftSection={<IconKeyOff size={16} />}
          loading={state.fetching}
          disabled={lacking.length > 0}
          onClick={() => void run()}
        >
          Revoke key
        </Button>
      </Group>
    </Stack>
  );
}

export function RevokeKeyDialog({
  opened,
  apiKey,
  onClose,
  onRevoked,
}: {
  opened: boolean;
  /** The key to revoke; kept while the dialog closes, so its content does not change as it fades. */
  apiKey: ApiKey | null;
  onClose(): void;
  onRevoked(key: ApiKey): void;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={apiKey ? `Revoke ${apiKey.name}?` : 'Revoke'}>
      {/* Keyed: each opening starts without the previous refusal. */}
      {apiKey && opened ? (
        <RevokeConfirmation
          key={apiKey.id}
          apiKey={apiKey}
          onCancel={onClose}
          onRevoked={() => onRevoked(apiKey)}
        />
      ) : null}
    </Modal>
  );
}
