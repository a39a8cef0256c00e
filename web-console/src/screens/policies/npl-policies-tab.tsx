// The NPL tab: the tenant's published versions and, when one is being written, the draft editor
// (a new policy, or a published version's text as the start of the next version).
import { Button, Group, Loader, Paper, Stack, Text, Title } from '@mantine/core';
import { IconPlus, IconX } from '@tabler/icons-react';
import { useMemo, useState } from 'react';
import { useQuery } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { DraftEditor } from './draft-editor.tsx';
import { NEW_POLICY_TEMPLATE, nextVersionSource } from './new-version.ts';
import { PolicyVersionsQuery } from './operations.ts';
import { type PolicyVersion, PolicyVersions } from './policy-versions.tsx';

interface Draft {
  readonly key: number;
  readonly source: string;
  /** The version it started from, or null for a new policy. */
  readonly basedOn: string | null;
}

let draftKeys = 0;

export function NplPoliciesTab() {
  const [result, reexecute] = useQuery({ query: PolicyVersionsQuery });
  const [draft, setDraft] = useState<Draft | null>(null);
  const published = useMemo(
    () =>
      new Map(
        (result.data?.nplPolicyVersions ?? []).map((version) => [version.uri, version.contentHash]),
      ),
    [result.data],
  );
  const reload = () => reexecute({ requestPolicy: 'network-only' });
  const startDraft = (source: string, basedOn: string | null) =>
    setDraft({ key: ++draftKeys, source, basedOn });

  return (
    <Stack gap="lg">
      <Group justify="space-between">
        <Text c="dimmed" size="sm">
          Published versions never change. Every pinned policy is evaluated on every inspect; the
          most restrictive decision wins.
        </Text>
        <Button
          leftSection={<IconPlus size={16} />}
          onClick={() => startDraft(NEW_POLICY_TEMPLATE, null)}
        >
          New policy
        </Button>
      </Group>
      {draft ? (
        <Paper withBorder p="md">
          <Group justify="space-between" mb="sm">
            <Title order={3} size="h4">
              {draft.basedOn ? `Draft: new version of ${draft.basedOn}` : 'Draft: new policy'}
            </Title>
            <Button
              variant="subtle"
              color="gray"
              leftSection={<IconX size={16} />}
              onClick={() => setDraft(null)}
            >
              Close draft
            </Button>
          </Group>
          <DraftEditor
            key={draft.key}
            initialSource={draft.source}
            published={published}
            onPublished={() => {
              setDraft(null);
              reload();
            }}
          />
        </Paper>
      ) : null}
      {result.error ? <ErrorAlert error={result.error} /> : null}
      {result.data ? (
        <PolicyVersions
          versions={result.data.nplPolicyVersions}
          pinned={result.data.gatewayPolicy.pinnedPolicies}
          onEdit={(version: PolicyVersion) =>
            startDraft(nextVersionSource(version.source), version.uri)
          }
          onChanged={reload}
        />
      ) : result.fetching ? (
        <Loader size="sm" aria-label="Loading policies" />
      ) : null}
    </Stack>
  );
}
