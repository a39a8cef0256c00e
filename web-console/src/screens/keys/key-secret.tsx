// A new key's secret, the one time the gateway tells it: with a copy button and a warning. Held
// only by the create dialog while it is open: closing it drops the secret, and no query can read
// it back (the gateway keeps a hash).
import { Alert, Button, Code, Group, Stack, Text } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { CopySecretButton } from '../../components/copy-secret-button.tsx';
import type { CreatedApiKey } from './queries.ts';

export function KeySecret({ created, onDone }: { created: CreatedApiKey; onDone(): void }) {
  return (
    <Stack gap="md">
      <Alert color="yellow" icon={<IconAlertTriangle size={18} />} title="Shown once">
        Copy this key now and keep it where it will be used. The gateway stores only a hash of it:
        when this dialog closes it is gone, and nothing can show it again (a lost key means creating
        another and revoking this one).
      </Alert>
      <Text size="sm">
        Key <strong>{created.apiKey.name}</strong> was created with{' '}
        {created.apiKey.scopes.map((scope, i) => (
          <span key={scope}>
            {i > 0 ? ', ' : null}
            <Code>{scope}</Code>
          </span>
        ))}
        {created.apiKey.expiresAt
          ? `; it expires ${new Date(created.apiKey.expiresAt).toLocaleString()}`
          : '; it does not expire'}
        .
      </Text>
      <Code
        block
        aria-label="New API key"
        style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}
      >
        {created.secret}
      </Code>
      <Group justify="space-between">
        <CopySecretButton
          value={created.secret}
          label="Copy API key"
          copiedLabel="API key copied"
        />
        <Button onClick={onDone}>I have stored it, close</Button>
      </Group>
    </Stack>
  );
}
