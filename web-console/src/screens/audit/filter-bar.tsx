// The filters of the trail: an action (one the gateway writes, or any typed text), an agent (by
// name or id), a decision and a time range. Changing one reloads the table and restarts the live
// tail with it.
import { Autocomplete, Button, Group, Select, TextInput } from '@mantine/core';
import { IconFilterOff } from '@tabler/icons-react';
import { AgentFilter } from './agent-filter.tsx';
import { decisionLabel } from './entry-fields.ts';
import { type AuditFilters, KNOWN_ACTIONS, KNOWN_DECISIONS, NO_FILTERS } from './filters.ts';

export function FilterBar({
  filters,
  onChange,
}: {
  filters: AuditFilters;
  onChange(filters: AuditFilters): void;
}) {
  const set = (patch: Partial<AuditFilters>) => onChange({ ...filters, ...patch });
  const any = Object.values(filters).some((value) => value !== '');
  return (
    <Group align="flex-end" gap="sm" wrap="wrap">
      <Autocomplete
        label="Action"
        placeholder="Any action"
        data={KNOWN_ACTIONS as string[]}
        value={filters.action}
        onChange={(action) => set({ action })}
        clearable
        w={190}
      />
      <AgentFilter
        value={{ agent: filters.agent, agentId: filters.agentId }}
        onChange={(choice) => set(choice)}
      />
      <Select
        label="Decision"
        placeholder="Any decision"
        data={KNOWN_DECISIONS.map((value) => ({ value, label: decisionLabel(value) }))}
        value={filters.decision || null}
        onChange={(decision) => set({ decision: decision ?? '' })}
        clearable
        w={160}
      />
      <TextInput
        type="datetime-local"
        label="From"
        value={filters.from}
        onChange={(event) => set({ from: event.currentTarget.value })}
        w={175}
      />
      <TextInput
        type="datetime-local"
        label="To"
        value={filters.to}
        onChange={(event) => set({ to: event.currentTarget.value })}
        w={175}
      />
      <Button
        variant="subtle"
        leftSection={<IconFilterOff size={16} />}
        disabled={!any}
        onClick={() => onChange(NO_FILTERS)}
      >
        Clear filters
      </Button>
    </Group>
  );
}
