// The agent filter: type a name or an id, or pick one of the tenant's agents the server suggests
// (auditAgents, which a reader of the trail may call without agents:manage). A picked agent
// filters by its id; typed text by whatever it names, so a name several agents share selects the
// entries of each, which the filter says.
import { Autocomplete, Group, Text } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useRef } from 'react';
import { useQuery } from 'urql';
import { AuditAgentsQuery } from './queries.ts';
import { shortId } from './subject.tsx';

export interface AgentChoice {
  /** The text: a name or an id. */
  readonly agent: string;
  /** The agent picked from the list; empty for typed text. */
  readonly agentId: string;
}

export function AgentFilter({
  value,
  onChange,
}: {
  value: AgentChoice;
  onChange(choice: AgentChoice): void;
}) {
  const [search] = useDebouncedValue(value.agent.trim(), 200);
  const [{ data }] = useQuery({ query: AuditAgentsQuery, variables: { search } });
  const agents = data?.auditAgents ?? [];
  // Picking an option sets the text to the agent's name right after: that text is the pick's.
  const picked = useRef<string | null>(null);
  const text = value.agent.trim().toLowerCase();
  const namesakes =
    value.agentId === '' && text !== ''
      ? agents.filter((agent) => agent.name?.toLowerCase() === text).length
      : 0;
  return (
    <Autocomplete
      label="Agent"
      placeholder="Name or id"
      data={agents.map((agent) => ({ value: agent.id, label: agent.name ?? agent.id }))}
      // The server searched names and ids already.
      filter={({ options }) => options}
      renderOption={({ option }) => (
        <Group gap="xs" wrap="nowrap" justify="space-between" w="100%">
          <Text size="sm">{'label' in option ? String(option.label) : option.value}</Text>
          <Text size="xs" c="dimmed" ff="monospace">
            {shortId(option.value)}
          </Text>
        </Group>
      )}
      value={value.agent}
      onOptionSubmit={(id) => {
        const name = agents.find((agent) => agent.id === id)?.name ?? id;
        picked.current = name;
        onChange({ agent: name, agentId: id });
      }}
      onChange={(agent) => {
        if (picked.current === agent) return;
        picked.current = null;
        onChange({ agent, agentId: '' });
      }}
      description={
        namesakes > 1
          ? `${namesakes} agents have this name: the entries of each are shown; pick one to narrow.`
          : undefined
      }
      clearable
      w={220}
    />
  );
}
