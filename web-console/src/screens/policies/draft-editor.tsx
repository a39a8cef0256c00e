// A draft policy: the YAML editor with the engine's errors at their line and column (checked by
// the batch endpoint while typing) and the warnings publishing would answer (asked of the gateway
// for a valid draft), Publish (enabled only when the draft is known to be valid), the errors of a
// refused publish placed the same way, and the "try it" panel.
import { Alert, Button, Group, List, Stack, Text, ThemeIcon } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconAlertTriangle, IconCircleCheck, IconCircleX } from '@tabler/icons-react';
import { Text as DocText } from '@uiw/react-codemirror';
import { useMemo, useState } from 'react';
import { useMutation } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import type { PolicyIssue } from './batch-client.ts';
import { describePlacement, type PlacedIssue, placeIssues } from './diagnostics.ts';
import { PublishPolicyMutation } from './operations.ts';
import { TryItPanel } from './try-it-panel.tsx';
import { useDraftCheck } from './use-draft-check.ts';
import { usePublishPreview } from './use-publish-preview.ts';
import { type PublishedHashes, versionConflict } from './version-conflict.ts';
import { YamlEditor } from './yaml-editor.tsx';

/** Issues the publish mutation answered for one exact text. */
interface PublishRefusal {
  readonly source: string;
  readonly message: string;
  readonly issues: readonly PolicyIssue[];
}

function IssueList({ placed }: { placed: readonly PlacedIssue[] }) {
  return (
    <List spacing={4} size="sm" aria-label="Problems in the draft" center>
      {placed.map((item) => (
        <List.Item
          key={`${item.severity}:${item.line}:${item.column}:${item.issue.code}:${item.issue.message}`}
          icon={
            <ThemeIcon
              color={item.severity === 'error' ? 'red' : 'yellow'}
              size={18}
              radius="xl"
              variant="light"
            >
              {item.severity === 'error' ? (
                <IconCircleX size={14} />
              ) : (
                <IconAlertTriangle size={14} />
              )}
            </ThemeIcon>
          }
        >
          {item.severity === 'warning' ? 'warning: ' : ''}
          {describePlacement(item)}
          {item.issue.hint ? (
            <Text span size="xs" c="dimmed">
              {' '}
              — {item.issue.hint}
            </Text>
          ) : null}
        </List.Item>
      ))}
    </List>
  );
}

export function DraftEditor({
  initialSource,
  published,
  onPublished,
}: {
  initialSource: string;
  published: PublishedHashes;
  onPublished: (uri: string) => void;
}) {
  const [draft, setDraft] = useState(initialSource);
  const { check, checking } = useDraftCheck(draft);
  const [refusal, setRefusal] = useState<PublishRefusal | null>(null);
  const [publishing, publish] = useMutation(PublishPolicyMutation);

  const current = check && !checking ? check : null;
  const previewWarnings = usePublishPreview(current, published);
  const placed = useMemo(() => {
    if (refusal && refusal.source === draft) {
      return placeIssues(toDoc(draft), refusal.issues);
    }
    if (!current) return null;
    const conflict = versionConflict(current.source, current.item, published);
    const errors = current.item?.errors ?? [];
    return placeIssues(
      toDoc(current.source),
      conflict ? [...errors, conflict] : errors,
      // The preview's include the engine's, and the tenant's beside them.
      previewWarnings ?? current.item?.warnings,
    );
  }, [current, refusal, draft, published, previewWarnings]);
  const errorCount = placed?.filter((item) => item.severity === 'error').length ?? 0;
  const empty = draft.trim() === '';

  const submit = async () => {
    const source = draft;
    const result = await publish({ source });
    const answer = result.data?.publishNplPolicy;
    if (answer?.__typename === 'NplDocumentError') {
      setRefusal({ source, message: answer.message, issues: answer.issues });
      return;
    }
    if (answer?.__typename === 'MutationPublishNplPolicySuccess') {
      setRefusal(null);
      const { created, uri, warnings } = answer.data;
      const warned = warnings.map((warning) => ` Warning: ${warning.message}.`).join('');
      notifications.show({
        color: warnings.length > 0 ? 'yellow' : 'green',
        title: created ? 'Published' : 'Already published',
        message: created
          ? `${uri} is published; pin it to enforce it on every inspect.${warned}`
          : `${uri} already has this content; nothing changed.`,
      });
      onPublished(answer.data.uri);
    }
  };

  return (
    <Stack gap="md">
      <YamlEditor label="Policy source" value={draft} onChange={setDraft} issues={placed} />
      <Group justify="space-between" align="flex-start" wrap="nowrap">
        <Stack gap={4} style={{ flex: 1 }}>
          <CheckStatus
            empty={empty}
            checking={checking}
            failure={current?.failure ?? null}
            errorCount={errorCount}
            contentHash={current?.item?.contentHash ?? null}
          />
          {placed && placed.length > 0 ? <IssueList placed={placed} /> : null}
        </Stack>
        <Button
          onClick={submit}
          loading={publishing.fetching}
          disabled={empty || checking || errorCount > 0}
        >
          Publish
        </Button>
      </Group>
      {refusal && refusal.source === draft ? (
        <Alert color="red" title="The gateway refused this version" role="alert">
          {refusal.message}
        </Alert>
      ) : null}
      {publishing.error ? <ErrorAlert error={publishing.error} /> : null}
      <TryItPanel draft={draft} disabled={empty || errorCount > 0} />
    </Stack>
  );
}

function toDoc(source: string): DocText {
  return DocText.of(source.split(/\r\n|\r|\n/));
}

function CheckStatus(props: {
  empty: boolean;
  checking: boolean;
  failure: string | null;
  errorCount: number;
  contentHash: string | null;
}) {
  if (props.empty) return <Text size="sm">Write a policy, or edit a published version.</Text>;
  if (props.checking) return <Text size="sm">Checking the draft…</Text>;
  if (props.failure) {
    return (
      <Text size="sm" c="orange">
        The draft could not be checked ({props.failure}); publishing checks it again.
      </Text>
    );
  }
  if (props.errorCount > 0) {
    return (
      <Text size="sm" c="red" fw={500}>
        {props.errorCount === 1 ? '1 error' : `${props.errorCount} errors`}: fix{' '}
        {props.errorCount === 1 ? 'it' : 'them'} to publish.
      </Text>
    );
  }
  return (
    <Group gap={6}>
      <IconCircleCheck size={16} aria-hidden />
      <Text size="sm">
        Valid{props.contentHash ? `, content hash ${props.contentHash.slice(0, 12)}…` : ''}
      </Text>
    </Group>
  );
}
