// Confirming a decision: approving takes an optional reason, rejecting asks for one (the agent's
// owner reads it). An API refusal (already decided, expired) stays in the dialog with its code and
// hint; success closes it and says so.
import { Button, Group, Modal, Stack, Text, Textarea } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import type { CombinedError } from '@urql/core';
import { useState } from 'react';
import { useMutation } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import type { Decision } from './held-call-card.tsx';
import { ApproveMutation, type HeldCall, RejectMutation } from './operations.ts';

export function DecisionDialog({
  call,
  decision,
  onClose,
  onDecided,
  onRefused,
}: {
  call: HeldCall;
  decision: Decision;
  onClose(): void;
  onDecided(id: string): void;
  /** The API refused (e.g. someone else decided first): the queue should be read again. */
  onRefused(): void;
}) {
  const [reason, setReason] = useState('');
  const [missingReason, setMissingReason] = useState(false);
  const [error, setError] = useState<CombinedError | null>(null);
  const [approveState, approve] = useMutation(ApproveMutation);
  const [rejectState, reject] = useMutation(RejectMutation);
  const approving = decision === 'approve';
  const fetching = approving ? approveState.fetching : rejectState.fetching;
  const agentName = call.agent?.name ?? call.agentId;

  async function confirm() {
    const trimmed = reason.trim();
    if (!approving && trimmed === '') {
      setMissingReason(true);
      return;
    }
    const variables = { id: call.id, reason: trimmed === '' ? null : trimmed };
    const result = approving ? await approve(variables) : await reject(variables);
    if (result.error) {
      setError(result.error);
      onRefused();
      return;
    }
    notifications.show({
      color: approving ? 'green' : 'orange',
      title: approving ? 'Call approved' : 'Call rejected',
      message: `${call.toolName} by ${agentName}: the agent's resubmission will ${
        approving ? 'pass once' : 'be refused'
      }.`,
    });
    onDecided(call.id);
    onClose();
  }

  return (
    <Modal
      opened
      onClose={onClose}
      title={approving ? `Approve ${call.toolName}?` : `Reject ${call.toolName}?`}
    >
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void confirm();
        }}
      >
        <Stack>
          <Text size="sm">
            {approving
              ? `${agentName} may then make this exact call once, before it expires.`
              : `${agentName}'s resubmission of this call will be refused.`}
          </Text>
          <Textarea
            label={approving ? 'Reason (optional)' : 'Reason'}
            description="Recorded with the decision in the audit trail."
            withAsterisk={!approving}
            autosize
            minRows={2}
            data-autofocus
            value={reason}
            error={missingReason ? 'Say why the call is rejected.' : undefined}
            onChange={(event) => {
              setReason(event.currentTarget.value);
              setMissingReason(false);
            }}
          />
          {error ? <ErrorAlert error={error} title="Not decided" /> : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" color={approving ? 'green' : 'red'} loading={fetching}>
              {approving ? 'Confirm approval' : 'Confirm rejection'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
