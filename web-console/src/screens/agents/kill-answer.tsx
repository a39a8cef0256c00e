// A kill as the gateway answered it: what it revoked, rejected and aborted, and how far it got
// (data planes that confirmed out of those connected, the slowest, whether the control plane
// reported). Shown after a kill in the console and on a killed agent's page.
import { Badge, Code, Group, Table, Text } from '@mantine/core';
import { type FragmentOf, readFragment } from '../../graphql.ts';
import { KillAnswerFragment } from './operations.ts';

export function KillAnswerView({ kill }: { kill: FragmentOf<typeof KillAnswerFragment> }) {
  const answer = readFragment(KillAnswerFragment, kill);
  const { revoked, propagation } = answer;
  const complete =
    propagation.controlPlaneReached && propagation.confirmed === propagation.dataPlanes;
  return (
    <Table variant="vertical" layout="fixed" withTableBorder aria-label="Kill answer">
      <Table.Tbody>
        <Table.Tr>
          <Table.Th w={220}>Killed at</Table.Th>
          <Table.Td>{new Date(answer.killedAt).toLocaleString()}</Table.Td>
        </Table.Tr>
        <Table.Tr>
          <Table.Th>Reason</Table.Th>
          <Table.Td>{answer.reason}</Table.Td>
        </Table.Tr>
        <Table.Tr>
          <Table.Th>Revoked</Table.Th>
          <Table.Td>
            {revoked.credentials} credentials, {revoked.delegations} delegations,{' '}
            {revoked.oauthClients} OAuth clients, {revoked.tokens} tokens
          </Table.Td>
        </Table.Tr>
        <Table.Tr>
          <Table.Th>Rejected approvals</Table.Th>
          <Table.Td>{answer.rejectedApprovals}</Table.Td>
        </Table.Tr>
        <Table.Tr>
          <Table.Th>Aborted executions</Table.Th>
          <Table.Td>{answer.abortedExecutions}</Table.Td>
        </Table.Tr>
        <Table.Tr>
          <Table.Th>Propagation</Table.Th>
          <Table.Td>
            <Group gap="xs">
              <Badge color={complete ? 'teal' : 'yellow'} variant="light">
                {propagation.confirmed}/{propagation.dataPlanes} data planes confirmed
              </Badge>
              <Text size="sm">
                slowest{' '}
                {propagation.slowestMs === null ? '—' : `${propagation.slowestMs.toFixed(1)} ms`}
              </Text>
            </Group>
            <Text size="sm" c="dimmed">
              {propagation.confirmedBy.length > 0
                ? `Confirmed by ${propagation.confirmedBy.join(', ')}. `
                : ''}
              {propagation.controlPlaneReached
                ? 'Control plane reached.'
                : 'Control plane not reached in time: it propagates the kill when it runs.'}
            </Text>
          </Table.Td>
        </Table.Tr>
        <Table.Tr>
          <Table.Th>Audit entry</Table.Th>
          <Table.Td>
            <Code>{answer.auditId}</Code>
          </Table.Td>
        </Table.Tr>
      </Table.Tbody>
    </Table>
  );
}
