// One approval on a page of its own, `/console/approvals/<id>`: where an MCP client sends its
// user when a call is held (the gateway's URL elicitation and its -32021 both name this page). It
// shows the held call as the queue does, with Approve and Reject while it is pending, and what
// became of it otherwise (approved, used, rejected with its reason, expired), live: the queue's
// subscription says when anyone decides it, and the page reads it again. An id the tenant has no
// approval under is said so, naming it (the query is the tenant's: another tenant's approval is
// not found either).
import { Alert, Anchor, Code, Loader, Stack, Text, Title } from '@mantine/core';
import { IconCircleCheck, IconCircleX, IconClockOff } from '@tabler/icons-react';
import { useEffect, useState } from 'react';
import { useClient, useQuery } from 'urql';
import { Link } from 'wouter';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { useNow } from '../../components/use-now.ts';
import { readFragment } from '../../graphql.ts';
import { DecisionDialog } from './decision-dialog.tsx';
import { type Decision, HeldCallCard } from './held-call-card.tsx';
import {
  ApprovalQuery,
  ApprovalQueueSubscription,
  type HeldCall,
  HeldCallFields,
} from './operations.ts';

export function ApprovalPage({
  id,
  canDecide,
  decideScope,
}: {
  id: string;
  canDecide: boolean;
  decideScope: string;
}) {
  const client = useClient();
  const [result, refetch] = useQuery({
    query: ApprovalQuery,
    variables: { id },
    requestPolicy: 'network-only',
  });
  const [deciding, setDeciding] = useState<Decision | null>(null);
  const now = useNow();

  // Anyone's decision (or the expiry's) reaches the page: it reads the approval again.
  useEffect(() => {
    const { unsubscribe } = client
      .subscription(ApprovalQueueSubscription, {})
      .subscribe((event) => {
        const approval = event.data?.approvalQueue?.approval;
        if (approval && readFragment(HeldCallFields, approval).id === id) {
          refetch({ requestPolicy: 'network-only' });
        }
      });
    return unsubscribe;
  }, [client, id, refetch]);

  const approval = result.data?.approval;
  const call = approval ? (readFragment(HeldCallFields, approval) as HeldCall) : undefined;
  const expired =
    call !== undefined && call.status === 'PENDING' && Date.parse(call.expiresAt) <= now;

  return (
    <Stack>
      <Anchor component={Link} href="/" size="sm">
        ← The approval queue
      </Anchor>
      {result.error ? (
        <ErrorAlert error={result.error} title="The approval could not be read" />
      ) : null}
      {result.fetching && !result.data ? <Loader aria-label="Loading the approval" /> : null}
      {result.data && !approval ? (
        <Alert color="gray" title="No such approval">
          This tenant has no approval <Code>{id}</Code>. The link may be for another tenant, or
          mistyped.
        </Alert>
      ) : null}
      {call && approval ? (
        <>
          <Title order={3} size="h4">
            Approval <Code>{call.id}</Code>
          </Title>
          <Outcome
            status={expired ? 'EXPIRED' : call.status}
            decidedBy={approval.decidedBy ?? null}
            reason={approval.decisionReason ?? null}
          />
          <HeldCallCard
            call={call}
            now={now}
            onDecide={
              canDecide && call.status === 'PENDING' && !expired
                ? (_held, decision) => setDeciding(decision)
                : null
            }
          />
          {call.status === 'PENDING' && !canDecide ? (
            <Text size="sm" c="dimmed">
              Your API key lacks the <Code>{decideScope}</Code> scope, needed to decide it.
            </Text>
          ) : null}
          {deciding ? (
            <DecisionDialog
              call={call}
              decision={deciding}
              onClose={() => setDeciding(null)}
              onDecided={() => refetch({ requestPolicy: 'network-only' })}
              onRefused={() => refetch({ requestPolicy: 'network-only' })}
            />
          ) : null}
        </>
      ) : null}
    </Stack>
  );
}

/** What became of the approval, and what the agent's user does next. */
function Outcome({
  status,
  decidedBy,
  reason,
}: {
  status: string;
  decidedBy: string | null;
  reason: string | null;
}) {
  const by = decidedBy ? ` by ${decidedBy}` : '';
  switch (status) {
    case 'PENDING':
      return (
        <Alert color="yellow" title="Waiting for a decision">
          The agent's call is held until an operator approves or rejects it here.
        </Alert>
      );
    case 'APPROVED':
    case 'USED':
      return (
        <Alert color="green" icon={<IconCircleCheck size={18} />} title={`Approved${by}`}>
          {status === 'USED'
            ? 'The agent has made the call.'
            : 'You may return to the agent: its client retries the call, which passes once.'}
          {reason ? ` Reason: ${reason}` : ''}
        </Alert>
      );
    case 'REJECTED':
      return (
        <Alert color="red" icon={<IconCircleX size={18} />} title={`Rejected${by}`}>
          You may return to the agent: its client's retry is refused.
          {reason ? ` Reason: ${reason}` : ''}
        </Alert>
      );
    default:
      return (
        <Alert color="gray" icon={<IconClockOff size={18} />} title="Expired">
          Nobody decided in time; the agent's retry is refused. It may ask again.
        </Alert>
      );
  }
}
