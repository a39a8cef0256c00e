// What spawn answers once and never again: the private key (JWK), the OAuth client secret, with
// the client id and credential id beside them. Held only in the drawer's state: closing it drops
// them, and no query can read them back (the gateway keeps the public key and a hash).
import { Alert, Button, Code, Group, Stack, Text } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { CopySecretButton } from '../../components/copy-secret-button.tsx';
import { CopyValue } from './copy-value.tsx';
import type { SpawnAnswer } from './operations.ts';

function Secret({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Stack gap={2}>
      <Text size="sm" fw={500}>
        {label}
      </Text>
      {children}
    </Stack>
  );
}

export function SpawnSecrets({ answer, onDone }: { answer: SpawnAnswer; onDone(): void }) {
  const jwk = answer.privateKeyJwk == null ? null : JSON.stringify(answer.privateKeyJwk, null, 2);
  return (
    <Stack gap="md">
      <Alert color="yellow" icon={<IconAlertTriangle size={18} />} title="Shown once">
        Copy these secrets now and keep them where the agent runs. The gateway stores only the
        public key and a hash of the client secret: when this panel closes they are gone, and
        nothing can show them again (a lost secret means spawning a new agent).
      </Alert>
      <Text size="sm">
        Agent <strong>{answer.agent.name}</strong> (<Code>{answer.agent.id}</Code>) was spawned.
      </Text>
      <Secret label="OAuth client_id">
        <CopyValue value={answer.oauth.clientId} label="client_id" />
      </Secret>
      {answer.oauth.clientSecret ? (
        <Secret label="OAuth client_secret">
          <CopyValue value={answer.oauth.clientSecret} label="client_secret" />
        </Secret>
      ) : null}
      <Secret label="Token endpoint">
        <CopyValue value={answer.oauth.tokenEndpoint} label="token endpoint" />
      </Secret>
      <Secret label="Identity credential id">
        <CopyValue value={answer.credentialId} label="credential id" />
        <Text size="xs" c="dimmed">
          Expires {new Date(answer.expiresAt).toLocaleString()}
        </Text>
      </Secret>
      {jwk ? (
        <Secret label="Private key (JWK)">
          <Code block aria-label="Private key JWK">
            {jwk}
          </Code>
          <CopySecretButton
            value={jwk}
            label="Copy private key JWK"
            copiedLabel="Private key copied"
          />
        </Secret>
      ) : null}
      <Group justify="flex-end">
        <Button onClick={onDone}>I have stored them, close</Button>
      </Group>
    </Stack>
  );
}
