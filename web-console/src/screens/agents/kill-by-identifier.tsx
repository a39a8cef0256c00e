// The Agents screen of a key that may kill but not read agents (agents:kill without
// agents:manage: an incident responder's key). The `agents` and `agent` queries need
// agents:manage, so nothing can be listed; the agent is named the way killAgent accepts it: its
// id or its z6Mk… public key, pasted from an alert, the audit trail or a colleague's console link
// (/console/agents/<id>, which opens this form with the id filled in). A confirmation names
// exactly what is killed; the answer is the kill's, as on an agent's page.

import { Alert, Button, Code, Group, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { modals } from '@mantine/modals';
import { IconSkull } from '@tabler/icons-react';
import { type FormEvent, useState } from 'react';
import { useMutation } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { decodePathSegment } from '../../components/path-segment.ts';
import { KillAnswerView } from './kill-answer.tsx';
import { KillAgentByIdentifierMutation } from './operations.ts';

/** As the API: 1-500 characters, not blank. */
const MAX_REASON = 500;

export type AgentIdentifier = { agentId: string } | { publicKey: string };

/**
 * What was pasted, as killAgent's argument: a console link's id, a `did:key:` or `z6Mk…` public
 * key, or else an agent id; null when blank.
 */
export function parseAgentIdentifier(text: string): AgentIdentifier | null {
  const value = text.trim();
  if (!value) return null;
  const linked = /\/agents\/([^/?#\s]+)/.exec(value);
  if (linked?.[1]) return { agentId: decodePathSegment(linked[1]) };
  const key = value.replace(/^did:key:/, '');
  if (key.startsWith('z6Mk')) return { publicKey: key };
  return { agentId: value };
}

export function KillByIdentifier({ initial = '' }: { initial?: string }) {
  const [identifier, setIdentifier] = useState(initial);
  const [reason, setReason] = useState('');
  const [result, kill] = useMutation(KillAgentByIdentifierMutation);
  const target = parseAgentIdentifier(identifier);
  const ready = target !== null && reason.trim().length > 0;

  function confirm(event: FormEvent) {
    event.preventDefault();
    if (!target) return;
    const named =
      'agentId' in target ? `the agent with id ${target.agentId}` : `the agent ${target.publicKey}`;
    modals.openConfirmModal({
      title: 'Kill this agent?',
      children: (
        <Text size="sm" style={{ wordBreak: 'break-all' }}>
          Kill {named} everywhere: its credentials, delegations, OAuth clients and tokens are
          revoked, its pending approvals rejected and its calls in flight aborted. It cannot be
          undone.
        </Text>
      ),
      labels: { confirm: 'Kill agent', cancel: 'Cancel' },
      confirmProps: { color: 'red', leftSection: <IconSkull size={16} /> },
      onConfirm: () => {
        void kill({
          agentId: 'agentId' in target ? target.agentId : null,
          publicKey: 'publicKey' in target ? target.publicKey : null,
          reason: reason.trim(),
        });
      },
    });
  }

  return (
    <Stack gap="md">
      <Title order={2}>Agents</Title>
      <Alert color="gray" title="Kill only">
        Your key holds <Code>agents:kill</Code> without <Code>agents:manage</Code>: it cannot list
        or read agents, but it kills one named by its id or public key (from an alert, the audit
        trail or a colleague&apos;s link to the agent&apos;s page).
      </Alert>
      {result.data ? (
        <Stack gap="sm">
          <Alert color="red" title="Agent killed">
            Agent <Code>{result.data.killAgent.agentId}</Code> (
            <Code>{result.data.killAgent.publicKey}</Code>) is refused everywhere from now on.
          </Alert>
          <KillAnswerView kill={result.data.killAgent} />
        </Stack>
      ) : (
        <form onSubmit={confirm}>
          <Stack gap="sm" maw={640}>
            {result.error ? <ErrorAlert error={result.error} title="The kill was refused" /> : null}
            <TextInput
              label="Agent id or public key"
              description="The agent's id, its z6Mk… public key, or a link to its console page"
              withAsterisk
              value={identifier}
              onChange={(event) => setIdentifier(event.currentTarget.value)}
              data-autofocus
            />
            <Textarea
              label="Reason"
              description="Recorded with the kill and in the audit trail"
              withAsterisk
              maxLength={MAX_REASON}
              value={reason}
              onChange={(event) => setReason(event.currentTarget.value)}
            />
            <Group>
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
      )}
    </Stack>
  );
}
