// The kill switch in the console: a reason (required, recorded and audited) and the agent's name
// typed back, since a kill cannot be undone; then the kill's answer with its propagation.
import { Alert, Button, Group, Modal, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { IconSkull } from '@tabler/icons-react';
import { type FormEvent, useState } from 'react';
import { useMutation } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { KillAnswerView } from './kill-answer.tsx';
import { KillAgentMutation } from './operations.ts';

/** As the API: 1-500 characters, not blank. */
const MAX_REASON = 500;

function KillForm({ agent, onCancel }: { agent: { id: string; name: string }; onCancel(): void }) {
  const [reason, setReason] = useState('');
  const [typedName, setTypedName] = useState('');
  const [result, kill] = useMutation(KillAgentMutation);
  const ready = reason.trim().length > 0 && typedName === agent.name;

  if (result.data) {
    return (
      <Stack gap="md">
        <Alert color="red" title="Agent killed">
          {agent.name} is refused everywhere from now on.
        </Alert>
        <KillAnswerView kill={result.data.killAgent} />
        <Group justify="flex-end">
          <Button onClick={onCancel}>Close</Button>
        </Group>
      </Stack>
    );
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (ready) await kill({ agentId: agent.id, reason: reason.trim() });
  }

  return (
    <form onSubmit={submit}>
      <Stack gap="sm">
        <Text size="sm">
          Killing <strong>{agent.name}</strong> revokes its credentials, delegations, OAuth clients
          and tokens, rejects its pending approvals and aborts its calls in flight on every data
          plane. It cannot be undone.
        </Text>
        {result.error ? <ErrorAlert error={result.error} title="The kill was refused" /> : null}
        <Textarea
          label="Reason"
          description="Recorded with the kill and in the audit trail"
          withAsterisk
          maxLength={MAX_REASON}
          value={reason}
          onChange={(event) => setReason(event.currentTarget.value)}
          data-autofocus
        />
        <TextInput
          label="Type the agent's name to confirm"
          withAsterisk
          placeholder={agent.name}
          value={typedName}
          onChange={(event) => setTypedName(event.currentTarget.value)}
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
          <Button
            type="submit"
            color="red"
            leftSection={<IconSkull size={16} />}
            disabled={!ready}
            loading={result.fetching}
          >
            Kill agent
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function KillAgentDialog({
  agent,
  opened,
  onClose,
}: {
  agent: { id: string; name: string };
  opened: boolean;
  onClose(): void;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={`Kill ${agent.name}`} size="lg">
      {opened ? <KillForm agent={agent} onCancel={onClose} /> : null}
    </Modal>
  );
}
