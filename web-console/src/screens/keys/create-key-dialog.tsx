// Creating an API key: a name, its scopes (each with what it allows; presets for the common
// keys; scopes the signed-in key lacks are shown but cannot be chosen, as createApiKey refuses
// them) and an optional expiry; the API's refusals at their fields. Then the secret, once.
// Everything lives in the dialog's state while it is open: closing it forgets the form and the
// secret alike.
import {
  Button,
  Checkbox,
  Code,
  Group,
  Modal,
  Select,
  Stack,
  Text,
  TextInput,
  Tooltip,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { useMutation } from 'urql';
import { apiProblem, ErrorAlert } from '../../components/error-alert.tsx';
import { useSession } from '../../session/session.tsx';
import {
  EXPIRY_CHOICES,
  type ExpiryChoice,
  expiryOf,
  SCOPE_CHOICES,
  SCOPE_PRESETS,
} from './key-choices.ts';
import { KeySecret } from './key-secret.tsx';
import { CreateApiKeyMutation, type CreatedApiKey } from './queries.ts';

type Field = 'name' | 'scopes' | 'expiresAt';

/** The form field an API issue names (`input.name`, `input.scopes.0`…), if any. */
function fieldOf(path: string): Field | null {
  const name = path.replace(/^input\./, '').split('.')[0];
  return name === 'name' || name === 'scopes' || name === 'expiresAt' ? name : null;
}

function CreateKeyForm({ onCreated }: { onCreated(created: CreatedApiKey): void }) {
  const { hasScope } = useSession();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [expiry, setExpiry] = useState<ExpiryChoice>('never');
  const [customExpiry, setCustomExpiry] = useState('');
  const [expiryError, setExpiryError] = useState<string | null>(null);
  const [result, create] = useMutation(CreateApiKeyMutation);

  const fieldErrors: Partial<Record<Field, string>> = {};
  for (const issue of result.error ? apiProblem(result.error).issues : []) {
    const field = fieldOf(issue.field);
    if (field) fieldErrors[field] ??= issue.message;
  }
  const otherError = result.error && Object.keys(fieldErrors).length === 0 ? result.error : null;

  async function submit(event: FormEvent) {
    event.preventDefault();
    const expiresAt = expiryOf(expiry, customExpiry);
    if ('error' in expiresAt) {
      setExpiryError(expiresAt.error);
      return;
    }
    setExpiryError(null);
    const created = await create({ input: { name, scopes, expiresAt: expiresAt.expiresAt } });
    if (created.data) onCreated(created.data.createApiKey);
  }

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label="Name"
          description="What the key is for, e.g. the approvers' team or the incident runbook"
          withAsterisk
          maxLength={200}
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          error={fieldErrors.name}
          data-autofocus
        />
        <Stack gap={4}>
          <Text size="sm" fw={500}>
            Presets
          </Text>
          <Group gap="xs">
            {SCOPE_PRESETS.map((preset) => {
              const held = preset.scopes.every(hasScope);
              return (
                <Tooltip
                  key={preset.label}
                  label={`${preset.scopes.join(', ')}${held ? '' : ': your key lacks it'}`}
                >
                  {/* A disabled button gets no pointer events: the tooltip needs a wrapper. */}
                  <span>
                    <Button
                      size="xs"
                      variant="default"
                      disabled={!held}
                      onClick={() => setScopes([...preset.scopes])}
                    >
                      {preset.label}
                    </Button>
                  </span>
                </Tooltip>
              );
            })}
          </Group>
        </Stack>
        <Checkbox.Group
          label="Scopes"
          description="A key can grant only scopes it holds itself"
          withAsterisk
          value={scopes}
          onChange={setScopes}
          error={fieldErrors.scopes}
        >
          <Stack gap={6} mt={6}>
            {SCOPE_CHOICES.map(({ scope, description }) => {
              const held = hasScope(scope);
              return (
                <Checkbox
                  key={scope}
                  value={scope}
                  disabled={!held}
                  label={<Code>{scope}</Code>}
                  description={held ? description : `${description} Your key lacks it.`}
                />
              );
            })}
          </Stack>
        </Checkbox.Group>
        <Select
          label="Expires"
          allowDeselect={false}
          data={EXPIRY_CHOICES.map((choice) => ({ ...choice }))}
          value={expiry}
          onChange={(value) => setExpiry((value as ExpiryChoice | null) ?? 'never')}
          error={expiry === 'custom' ? undefined : (expiryError ?? fieldErrors.expiresAt)}
        />
        {expiry === 'custom' ? (
          <TextInput
            type="datetime-local"
            label="Expires at (your local time)"
            value={customExpiry}
            onChange={(event) => setCustomExpiry(event.currentTarget.value)}
            error={expiryError ?? fieldErrors.expiresAt}
          />
        ) : null}
        {otherError ? <ErrorAlert error={otherError} title="The gateway refused the key" /> : null}
        <Group justify="flex-end">
          <Button type="submit" loading={result.fetching}>
            Create key
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function CreateKeyDialog({
  opened,
  onClose,
  onCreated,
}: {
  opened: boolean;
  onClose(): void;
  /** Called when the key exists (its secret still showing), e.g. to reload the list. */
  onCreated(): void;
}) {
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const close = () => {
    setCreated(null);
    onClose();
  };
  return (
    <Modal
      opened={opened}
      onClose={close}
      title={created ? 'Key created: copy it now' : 'Create an API key'}
      size="lg"
      // A stray click must not lose the secret: it closes by its buttons only.
      closeOnClickOutside={created === null}
    >
      {/* Unmounted when closed, so the next opening starts from an empty form. */}
      {opened && created ? <KeySecret created={created} onDone={close} /> : null}
      {opened && !created ? (
        <CreateKeyForm
          onCreated={(answer) => {
            setCreated(answer);
            onCreated();
          }}
        />
      ) : null}
    </Modal>
  );
}
