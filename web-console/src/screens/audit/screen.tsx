// The audit trail screen: the tenant's entries newest first with a live tail on top, filters
// (action, agent, decision, time range), an entry's detail with its hash links, the server's
// chain check against the latest signed checkpoint, where that checkpoint is anchored (its sinks
// and witnesses) and a JSON Lines export of what the filters select.
import { Badge, Button, Group, Loader, Stack, Switch, Text, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useMemo, useState } from 'react';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { RequireScope } from '../../components/require-scope.tsx';
import { AnchoringPanel } from './anchoring-panel.tsx';
import { AuditTable } from './audit-table.tsx';
import { EntryDrawer } from './entry-drawer.tsx';
import { ExportButton } from './export-button.tsx';
import { FilterBar } from './filter-bar.tsx';
import { type AuditFilters, filterVariables, NO_FILTERS } from './filters.ts';
import type { AuditEntry } from './queries.ts';
import { useAuditTrail } from './use-audit-trail.ts';
import { VerifiableExportButton } from './verifiable-export-button.tsx';
import { ChainCheckOutcome, useChainCheck, VerifyChainButton } from './verify-chain.tsx';

function LiveSwitch({
  paused,
  held,
  onToggle,
}: {
  paused: boolean;
  held: number;
  onToggle(): void;
}) {
  return (
    <Group gap="xs">
      <Switch
        label={paused ? 'Live tail paused' : 'Live tail'}
        checked={!paused}
        onChange={onToggle}
        aria-label="Live tail"
      />
      {paused && held > 0 ? (
        <Badge variant="light" color="yellow">
          {held} new held back
        </Badge>
      ) : null}
      {!paused ? (
        <Badge variant="dot" color="green">
          live
        </Badge>
      ) : null}
    </Group>
  );
}

function AuditTrailView() {
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const [debounced] = useDebouncedValue(filters, 300);
  const variables = useMemo(() => filterVariables(debounced), [debounced]);
  const [paused, setPaused] = useState(false);
  const trail = useAuditTrail(variables, paused);
  const [open, setOpen] = useState<AuditEntry | null>(null);
  const [anchoringVersion, setAnchoringVersion] = useState(0);
  const check = useChainCheck({ from: variables.from, to: variables.to }, () =>
    setAnchoringVersion((n) => n + 1),
  );

  const toggleLive = () => {
    if (paused) trail.release();
    setPaused(!paused);
  };

  return (
    <Stack gap="md">
      <AnchoringPanel version={anchoringVersion} />
      <FilterBar filters={filters} onChange={setFilters} />
      <Group justify="space-between" align="flex-start">
        <LiveSwitch paused={paused} held={trail.held.length} onToggle={toggleLive} />
        <Group gap="sm" align="flex-start">
          <VerifyChainButton check={check} ranged={Boolean(variables.from || variables.to)} />
          <VerifiableExportButton variables={variables} />
          <ExportButton variables={variables} />
        </Group>
      </Group>
      <ChainCheckOutcome check={check} />
      {trail.error ? <ErrorAlert error={trail.error} title="The trail could not be read" /> : null}
      {trail.liveError ? (
        <ErrorAlert error={trail.liveError} title="The live tail stopped" />
      ) : null}
      {trail.entries.length === 0 && !trail.loading ? (
        <Text c="dimmed">No entries match these filters.</Text>
      ) : (
        <AuditTable entries={trail.entries} onOpen={setOpen} />
      )}
      <Group justify="center">
        {trail.loading ? <Loader size="sm" aria-label="Loading entries" /> : null}
        {trail.hasMore && !trail.loading ? (
          <Button variant="default" onClick={trail.loadMore}>
            Load more
          </Button>
        ) : null}
      </Group>
      <EntryDrawer
        entry={open}
        loaded={trail.entries}
        onOpen={setOpen}
        onClose={() => setOpen(null)}
      />
    </Stack>
  );
}

function AuditScreen() {
  return (
    <Stack gap="md">
      <Title order={2}>Audit trail</Title>
      <RequireScope scope="audit:read" to="read and verify the audit trail">
        <AuditTrailView />
      </RequireScope>
    </Stack>
  );
}

export default AuditScreen;
