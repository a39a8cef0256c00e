// A subject of an entry (its agent, its actor) as the table shows it: the current name the
// server resolved, with the recorded id beneath it (visually shortened, selected and copied in
// full); the id alone when the subject has no name (deleted, another tenant's, a CLI command).
import { Stack, Text } from '@mantine/core';
import type { AuditSubject } from './queries.ts';

/** `cb069128…`: enough to tell ids apart at a glance; the full id is in the title. */
export function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

/** What a kind is called beside an id without a name. */
const KIND_LABELS: Readonly<Record<string, string>> = {
  agent: 'agent',
  api_key: 'API key',
  oauth_client: 'OAuth client',
  cli: 'CLI',
};

export function kindLabel(kind: string): string {
  return KIND_LABELS[kind] ?? kind;
}

export function SubjectCell({
  subject,
  fallback = '—',
  idWidth = 110,
}: {
  subject: AuditSubject | null;
  /** Shown when there is no subject (e.g. the actor type of the gateway's own entries). */
  fallback?: string;
  /** How wide the id may show before it is cut visually (px). */
  idWidth?: number;
}) {
  if (subject === null) {
    return (
      <Text size="sm" c="dimmed">
        {fallback}
      </Text>
    );
  }
  return (
    <Stack gap={0} miw={0}>
      {subject.name !== null ? (
        <Text size="sm" fw={500} data-subject-name>
          {subject.name}
        </Text>
      ) : (
        <Text size="xs" c="dimmed">
          {kindLabel(subject.kind)}
        </Text>
      )}
      <Text size="xs" c="dimmed" ff="monospace" truncate="end" maw={idWidth} title={subject.id}>
        {subject.id}
      </Text>
    </Stack>
  );
}
