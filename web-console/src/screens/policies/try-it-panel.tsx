// "Try it": sample tool calls decided by the draft through the batch endpoint, before anything is
// published. Shows what step 5 of inspect (NPL) would answer; the gateway policy's checks before
// it (trusted servers, blocked tools, detectors) are not part of the draft and not tried here.
import {
  ActionIcon,
  Alert,
  Button,
  Code,
  Group,
  JsonInput,
  Paper,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { IconPlayerPlay, IconPlus, IconTrash } from '@tabler/icons-react';
import { useState } from 'react';
import { type BatchDecision, checkPolicy, type SampleCall } from './batch-client.ts';
import { DecisionBadge, gatewayOutcome } from './decision-badge.tsx';

const MODES = ['production', 'simulation', 'shadow'];

interface CallRow {
  readonly key: number;
  readonly tool: string;
  readonly args: string;
  readonly role: string;
  readonly mode: string;
}

let nextKey = 1;
const newRow = (tool = ''): CallRow => ({
  key: nextKey++,
  tool,
  args: '{}',
  role: '',
  mode: 'production',
});

/** A row as a batch call, or why it cannot be one. */
function toCall(row: CallRow, index: number): SampleCall | string {
  if (row.tool.trim() === '') return `call ${index + 1}: a tool name is needed`;
  let args: unknown;
  try {
    args = JSON.parse(row.args.trim() === '' ? '{}' : row.args);
  } catch {
    return `call ${index + 1}: the arguments are not JSON`;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return `call ${index + 1}: the arguments must be a JSON object`;
  }
  return {
    tool_name: row.tool.trim(),
    arguments: args as Record<string, unknown>,
    ...(row.role.trim() ? { agent_role: row.role.trim() } : {}),
    context: { mode: row.mode },
  };
}

export function TryItPanel({ draft, disabled }: { draft: string; disabled: boolean }) {
  const [rows, setRows] = useState<CallRow[]>(() => [newRow()]);
  const [results, setResults] = useState<readonly BatchDecision[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const update = (key: number, change: Partial<CallRow>) =>
    setRows((current) => current.map((row) => (row.key === key ? { ...row, ...change } : row)));

  const run = async () => {
    const calls = rows.map(toCall);
    const invalid = calls.find((call): call is string => typeof call === 'string');
    if (invalid) {
      setProblem(invalid);
      setResults(null);
      return;
    }
    setRunning(true);
    try {
      const item = await checkPolicy(draft, calls as SampleCall[]);
      if (!item.valid) {
        setProblem('The draft has errors: fix them above first.');
        setResults(null);
      } else {
        setProblem(null);
        setResults(item.decisions);
      }
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
      setResults(null);
    } finally {
      setRunning(false);
    }
  };

  return (
    <Paper withBorder p="md">
      <Stack gap="sm">
        <Title order={3} size="h5">
          Try it
        </Title>
        <Text size="sm" c="dimmed">
          Sample calls decided by the draft (the NPL step of inspect) without publishing it.
        </Text>
        {rows.map((row, index) => (
          <Group key={row.key} align="flex-end" gap="xs" wrap="nowrap">
            <TextInput
              label={`Tool name ${index + 1}`}
              value={row.tool}
              onChange={(event) => update(row.key, { tool: event.currentTarget.value })}
              w={160}
            />
            <JsonInput
              label={`Arguments ${index + 1}`}
              value={row.args}
              onChange={(args) => update(row.key, { args })}
              validationError="Not JSON"
              autosize
              minRows={1}
              maxRows={6}
              style={{ flex: 1 }}
            />
            <TextInput
              label={`Agent role ${index + 1}`}
              value={row.role}
              onChange={(event) => update(row.key, { role: event.currentTarget.value })}
              w={120}
            />
            <Select
              label={`Mode ${index + 1}`}
              data={MODES}
              value={row.mode}
              onChange={(mode) => update(row.key, { mode: mode ?? 'production' })}
              allowDeselect={false}
              w={130}
            />
            <ActionIcon
              variant="subtle"
              color="gray"
              size="lg"
              aria-label={`Remove call ${index + 1}`}
              disabled={rows.length === 1}
              onClick={() => setRows((current) => current.filter((r) => r.key !== row.key))}
            >
              <IconTrash size={16} />
            </ActionIcon>
          </Group>
        ))}
        <Group>
          <Button
            variant="default"
            leftSection={<IconPlus size={16} />}
            onClick={() => setRows((current) => [...current, newRow()])}
          >
            Add call
          </Button>
          <Button
            leftSection={<IconPlayerPlay size={16} />}
            onClick={run}
            loading={running}
            disabled={disabled}
          >
            Evaluate calls
          </Button>
        </Group>
        {problem ? (
          <Alert color="orange" role="alert">
            {problem}
          </Alert>
        ) : null}
        {results ? (
          <Table aria-label="Decisions of the sample calls" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Tool</Table.Th>
                <Table.Th>Decision</Table.Th>
                <Table.Th>NPL action</Table.Th>
                <Table.Th>Rule</Table.Th>
                <Table.Th>Reason code</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {results.map((decision, index) => {
                const outcome = gatewayOutcome(decision);
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: one row per call, in call order
                  <Table.Tr key={index}>
                    <Table.Td>{decision.tool}</Table.Td>
                    <Table.Td>
                      <DecisionBadge outcome={outcome} />
                    </Table.Td>
                    <Table.Td>{decision.action}</Table.Td>
                    <Table.Td>
                      <Code>{decision.ruleId}</Code>
                    </Table.Td>
                    <Table.Td>
                      {outcome.reasonCode ? <Code>{outcome.reasonCode}</Code> : '—'}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        ) : null}
      </Stack>
    </Paper>
  );
}
