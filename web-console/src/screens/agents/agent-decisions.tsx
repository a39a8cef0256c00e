// The agent's recent governed moments from the audit trail: its denies and kill (entries about
// the agent) and its holds (approval entries naming it). Allows are not audited; the Overview
// counts them from the data planes' own counters.
import { Badge, Code, Stack, Table, Text, Title } from '@mantine/core';
import { useMemo } from 'react';
import { useQuery } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { AgentDecisionsQuery, type DecisionEntry } from './operations.ts';

const SHOWN = 25;
const DECISION_ACTIONS = new Set([
  'inspect.deny',
  'inspect.shadow_block',
  'approval.requested',
  'agent.killed',
]);
const ACTION_COLOURS: Record<string, string> = {
  'inspect.deny': 'red',
  'inspect.shadow_block': 'orange',
  'approval.requested': 'yellow',
  'agent.killed': 'grape',
};

type Metadata = Record<string, unknown>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Newest first by chain position (a decimal string that may outgrow a number). */
function bySeqDesc(a: DecisionEntry, b: DecisionEntry): number {
  const delta = BigInt(b.seq) - BigInt(a.seq);
  return delta > 0n ? 1 : delta < 0n ? -1 : 0;
}

export function AgentDecisions({ agentId }: { agentId: string }) {
  const [result] = useQuery({ query: AgentDecisionsQuery, variables: { agentId } });
  const entries = useMemo(() => {
    if (!result.data) return [];
    const own = result.data.onAgent.edges.map((edge) => edge.node);
    const holds = result.data.holds.edges
      .map((edge) => edge.node)
      .filter((entry) => (entry.metadata as Metadata).agentId === agentId);
    return [...own, ...holds]
      .filter((entry) => DECISION_ACTIONS.has(entry.action))
      .sort(bySeqDesc)
      .slice(0, SHOWN);
  }, [result.data, agentId]);

  return (
    <Stack gap="xs">
      <Title order={3}>Recent decisions</Title>
      <Text size="sm" c="dimmed">
        Denies, holds and the kill, from the audit trail. Allowed calls are not audited: the
        Overview counts them.
      </Text>
      {result.error ? <ErrorAlert error={result.error} /> : null}
      {result.data && entries.length === 0 ? (
        <Text size="sm">No denies, holds or kill recorded for this agent.</Text>
      ) : null}
      {entries.length > 0 ? (
        <Table aria-label="Recent decisions">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Action</Table.Th>
              <Table.Th>Tool</Table.Th>
              <Table.Th>Reason</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {entries.map((entry) => {
              const metadata = entry.metadata as Metadata;
              const tool = [text(metadata.serverId), text(metadata.tool)]
                .filter(Boolean)
                .join(' / ');
              return (
                <Table.Tr key={entry.id}>
                  <Table.Td>{new Date(entry.createdAt).toLocaleString()}</Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={ACTION_COLOURS[entry.action] ?? 'gray'}>
                      {entry.action}
                    </Badge>
                  </Table.Td>
                  <Table.Td>{tool || '—'}</Table.Td>
                  <Table.Td>
                    {text(metadata.reasonCode) ? <Code>{text(metadata.reasonCode)}</Code> : null}{' '}
                    {text(metadata.reason) || text(metadata.ruleId)}
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      ) : null}
    </Stack>
  );
}
