// The sign-in form: one API key field; Enter submits. The key is checked before it is kept.
import { Alert, Button, Center, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { SignInError, useSessionState } from './session.tsx';

export function SignIn() {
  const { signIn } = useSessionState();
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!apiKey.trim()) {
      setError('Enter an API key (it starts with agk_).');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await signIn(apiKey);
    } catch (caught) {
      setError(caught instanceof SignInError ? caught.message : 'Sign-in failed.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w={440} component="main">
        <form onSubmit={submit} aria-label="Sign in">
          <Stack>
            <Title order={1} size="h2">
              Agent Gateway console
            </Title>
            <Text size="sm" c="dimmed">
              Sign in with an API key of your tenant. It is kept in this tab only and forgotten when
              you sign out or close the tab. The key made at first start is in{' '}
              <code>&lt;data dir&gt;/admin-api-key</code> (docs/console.md).
            </Text>
            <PasswordInput
              label="API key"
              placeholder="agk_…"
              autoComplete="off"
              autoFocus
              value={apiKey}
              onChange={(event) => setApiKey(event.currentTarget.value)}
              error={error}
            />
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
            {error?.includes('reached') ? (
              <Alert color="red" title="No gateway">
                Start it with <code>npm start</code>.
              </Alert>
            ) : null}
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
