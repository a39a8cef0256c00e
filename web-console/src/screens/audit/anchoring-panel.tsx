// Where the tenant's trail is anchored: its latest signed checkpoint (size, root, age, the
// witnesses that cosigned it) and each checkpoint sink's state — anchored, catching up, or failing
// with its last error — refreshed every few seconds, so a sink that is down shows here while
// appends go on. "Cut checkpoint" signs one now over every committed entry. On a phone it folds to
// one line (the checkpoint's size and age, how many sinks fail) that opens to the details.
import {
  ActionIcon,
  Alert,
  Badge,
  Button,
  Card,
  Code,
  Group,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
  Tooltip,
  useMatches,
} from '@mantine/core';
import { IconRefresh, IconStackPush } from '@tabler/icons-react';
import { type ReactNode, useCallback, useEffect, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { CopyableValue } from '../../components/copyable-value.tsx';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { useNow } from '../../components/use-now.ts';
import {
  countEntries,
  formatAge,
  SINK_CONDITIONS,
  SINK_KINDS,
  sinkCondition,
  sinksSummary,
  sinkTarget,
} from './anchoring-fields.ts';
import {
  type AuditAnchoring,
  AuditAnchoringQuery,
  type AuditSinkState,
  CutAuditCheckpointMutation,
} from './queries.ts';

const REFRESH_MS = 5_000;

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Stack gap={2} miw={0}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      {children}
    </Stack>
  );
}

function CheckpointSummary({
  checkpoint,
  witnessConfigured,
  now,
}: {
  checkpoint: NonNullable<AuditAnchoring['auditCheckpoint']>;
  witnessConfigured: boolean;
  now: number;
}) {
  return (
    <SimpleGrid cols={{ base: 2, md: 4 }} spacing="md">
      <Field label="Latest checkpoint">
        <Text fw={600} aria-label="Checkpoint tree size">
          {countEntries(checkpoint.treeSize)}
        </Text>
      </Field>
      <Field label="Signed">
        <Text title={checkpoint.createdAt} aria-label="Checkpoint age">
          {formatAge(checkpoint.createdAt, now)}
        </Text>
      </Field>
      <Field label="Root">
        <CopyableValue label="Checkpoint root" value={checkpoint.rootHash} truncate />
      </Field>
      <Field label="Cosigned by">
        {checkpoint.cosignedBy.length === 0 ? (
          <Text size="sm" c="dimmed" data-testid="cosigners">
            {witnessConfigured ? 'Not cosigned yet' : 'No witness configured'}
          </Text>
        ) : (
          <Group gap={4} data-testid="cosigners">
            {checkpoint.cosignedBy.map((witness) => (
              <Badge key={witness} variant="light" color="teal" style={{ textTransform: 'none' }}>
                {witness}
              </Badge>
            ))}
          </Group>
        )}
      </Field>
    </SimpleGrid>
  );
}

/** Its kind, and where it sends (a path, a URL, a witness's name). */
function SinkName({ sink }: { sink: AuditSinkState }) {
  return (
    <>
      <Text size="sm">{SINK_KINDS[sink.kind] ?? sink.kind}</Text>
      <Text size="xs" c="dimmed" ff="monospace" style={{ wordBreak: 'break-all' }}>
        {sinkTarget(sink)}
      </Text>
    </>
  );
}

function SinkRow({
  sink,
  latestSize,
  narrow,
  now,
}: {
  sink: AuditSinkState;
  latestSize: number | null;
  narrow: boolean;
  now: number;
}) {
  const condition = SINK_CONDITIONS[sinkCondition(sink)];
  const state = (
    <Badge
      variant="light"
      color={condition.color}
      data-column="state"
      style={{ minWidth: 'max-content' }}
    >
      {condition.label}
    </Badge>
  );
  if (narrow) {
    // A phone: what the sink is, its state and its error; the sizes are in GraphQL auditSinks.
    return (
      <Table.Tr data-sink={sink.name}>
        <Table.Td>
          <SinkName sink={sink} />
          {sink.lastError === null ? null : (
            <Text size="xs" c="red" data-column="error" style={{ wordBreak: 'break-word' }}>
              {sink.lastError}
            </Text>
          )}
        </Table.Td>
        <Table.Td>{state}</Table.Td>
      </Table.Tr>
    );
  }
  return (
    <Table.Tr data-sink={sink.name}>
      <Table.Td>
        <SinkName sink={sink} />
      </Table.Td>
      <Table.Td>{state}</Table.Td>
      <Table.Td data-column="anchored">
        {sink.anchoredTreeSize === null ? (
          <Text size="sm" c="dimmed">
            —
          </Text>
        ) : (
          <Text size="sm">
            {sink.anchoredTreeSize}
            {latestSize !== null ? ` of ${latestSize}` : ''} entries
          </Text>
        )}
        {sink.anchoredAt ? (
          <Text size="xs" c="dimmed" title={sink.anchoredAt}>
            signed {formatAge(sink.anchoredAt, now)}
          </Text>
        ) : null}
      </Table.Td>
      <Table.Td data-column="backlog">
        <Text size="sm">{sink.backlog}</Text>
      </Table.Td>
      <Table.Td data-column="error">
        {sink.lastError === null ? (
          <Text size="sm" c="dimmed">
            —
          </Text>
        ) : (
          <>
            <Text size="sm" c="red" style={{ wordBreak: 'break-word' }}>
              {sink.lastError}
            </Text>
            {sink.lastErrorAt ? (
              <Text size="xs" c="dimmed" title={sink.lastErrorAt}>
                {formatAge(sink.lastErrorAt, now)}
              </Text>
            ) : null}
          </>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

function SinkTable({ data, now }: { data: AuditAnchoring; now: number }) {
  const narrow = useMatches({ base: true, sm: false });
  if (data.auditSinks.length === 0) {
    return (
      <Alert color="yellow" title="No checkpoint sink" data-testid="no-sinks">
        <Text size="sm">
          Checkpoints stay in this gateway's database, which anchors nothing against whoever
          controls it. Set <Code>AGENT_GATEWAY_AUDIT_SINK_FILE</Code>,{' '}
          <Code>AGENT_GATEWAY_AUDIT_SINK_URL</Code> or <Code>AGENT_GATEWAY_AUDIT_WITNESS_URL</Code>{' '}
          (docs/audit.md, "Sinks").
        </Text>
      </Alert>
    );
  }
  return (
    <Table.ScrollContainer minWidth={narrow ? 0 : 640}>
      <Table aria-label="Checkpoint sinks" verticalSpacing="xs">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Sink</Table.Th>
            <Table.Th>State</Table.Th>
            {narrow ? null : (
              <>
                <Table.Th>Anchored up to</Table.Th>
                <Table.Th>Backlog</Table.Th>
                <Table.Th>Last error</Table.Th>
              </>
            )}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {data.auditSinks.map((sink) => (
            <SinkRow
              key={sink.name}
              sink={sink}
              latestSize={data.auditCheckpoint?.treeSize ?? null}
              narrow={narrow}
              now={now}
            />
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

export function AnchoringPanel({ version }: { version: number }) {
  const [{ data, error, fetching }, refetch] = useQuery({
    query: AuditAnchoringQuery,
    requestPolicy: 'network-only',
  });
  const [cut, cutCheckpoint] = useMutation(CutAuditCheckpointMutation);
  const now = useNow(1000);
  const refresh = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);
  // One timer for the panel's life (the clock above re-renders it every second).
  useEffect(() => {
    const timer = window.setInterval(refresh, REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [refresh]);
  // A chain check or a cut elsewhere on the screen: show what it changed at once.
  useEffect(() => {
    if (version > 0) refresh();
  }, [version, refresh]);
  // On a phone the panel folds to one line, so the entries stay on the first screen.
  const narrow = useMatches({ base: true, sm: false });
  const [open, setOpen] = useState(false);
  const folded = narrow && !open;
  const summary = data ? sinksSummary(data.auditSinks) : null;

  return (
    <Card withBorder padding="md" component="section" aria-labelledby="anchoring-title">
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap">
          <Title order={3} size="h5" id="anchoring-title">
            Anchoring
          </Title>
          <Group gap="xs" wrap="nowrap">
            <Tooltip label="Refresh" withArrow>
              <ActionIcon
                variant="subtle"
                loading={fetching}
                onClick={refresh}
                aria-label="Refresh anchoring"
              >
                <IconRefresh size={16} />
              </ActionIcon>
            </Tooltip>
            <Tooltip
              label="Signs a checkpoint now over every committed entry; the sinks receive it"
              multiline
              w={260}
              withArrow
            >
              <Button
                variant="default"
                size="xs"
                leftSection={<IconStackPush size={14} />}
                loading={cut.fetching}
                onClick={() => void cutCheckpoint({}).then(refresh)}
              >
                Cut checkpoint
              </Button>
            </Tooltip>
          </Group>
        </Group>
        {error ? <ErrorAlert error={error} title="The anchoring state could not be read" /> : null}
        {cut.error ? <ErrorAlert error={cut.error} title="No checkpoint was cut" /> : null}
        {data && folded ? (
          <Group gap="xs" justify="space-between" wrap="nowrap">
            <Text size="sm" data-testid="anchoring-summary">
              {data.auditCheckpoint
                ? `${data.auditCheckpoint.treeSize} entries, signed ${formatAge(data.auditCheckpoint.createdAt, now)}; `
                : 'No checkpoint yet; '}
              <Text span size="sm" c={summary?.color === 'green' ? undefined : summary?.color}>
                {summary?.text}
              </Text>
            </Text>
            <Button
              variant="subtle"
              size="xs"
              onClick={() => setOpen(true)}
              aria-expanded={false}
              style={{ flexShrink: 0 }}
            >
              Details
            </Button>
          </Group>
        ) : null}
        {data && !folded ? (
          <>
            {data.auditCheckpoint ? (
              <CheckpointSummary
                checkpoint={data.auditCheckpoint}
                witnessConfigured={data.auditSinks.some((sink) => sink.kind === 'witness')}
                now={now}
              />
            ) : (
              <Text size="sm" c="dimmed">
                No signed checkpoint yet: the first is cut when the gateway starts, or with Cut
                checkpoint.
              </Text>
            )}
            <SinkTable data={data} now={now} />
          </>
        ) : null}
      </Stack>
    </Card>
  );
}
