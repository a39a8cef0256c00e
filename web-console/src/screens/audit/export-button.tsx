// Export of the filtered trail as JSON Lines, made in the browser for analysis: the console pages
// through the auditTrail query with every current filter and writes one entry per line, oldest
// first. Filtered entries are not a chain; the export that verifies is VerifiableExportButton's.
import { Button, Stack, Text, Tooltip } from '@mantine/core';
import { IconDownload } from '@tabler/icons-react';
import type { CombinedError } from '@urql/core';
import { useState } from 'react';
import { type Client, type OperationResult, useClient } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { saveFile } from '../../components/save-file.ts';
import type { ResultOf } from '../../graphql.ts';
import type { AuditFilterVariables } from './filters.ts';
import { type AuditEntry, AuditTrailQuery } from './queries.ts';

const EXPORT_PAGE_SIZE = 100;

async function readFilteredTrail(
  client: Client,
  variables: AuditFilterVariables,
  onProgress: (count: number) => void,
): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let after: string | null = null;
  for (;;) {
    const result: OperationResult<ResultOf<typeof AuditTrailQuery>> = await client
      .query(
        AuditTrailQuery,
        { ...variables, first: EXPORT_PAGE_SIZE, after },
        { requestPolicy: 'network-only' },
      )
      .toPromise();
    if (result.error) throw result.error;
    const page = result.data?.auditTrail;
    if (!page) return entries;
    for (const edge of page.edges) entries.push(edge.node);
    onProgress(entries.length);
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return entries;
    after = page.pageInfo.endCursor;
  }
}

export function ExportButton({ variables }: { variables: AuditFilterVariables }) {
  const client = useClient();
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<CombinedError | null>(null);
  const run = async () => {
    setError(null);
    setProgress(0);
    try {
      const entries = await readFilteredTrail(client, variables, setProgress);
      const lines = entries
        .reverse()
        .map((entry) => JSON.stringify(entry))
        .join('\n');
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      saveFile(
        `audit-trail-${stamp}.jsonl`,
        new Blob([lines ? `${lines}\n` : ''], { type: 'application/x-ndjson' }),
      );
    } catch (failure) {
      setError(failure as CombinedError);
    } finally {
      setProgress(null);
    }
  };
  return (
    <Stack gap={4} align="flex-end">
      <Tooltip
        label="Made in the browser from the filtered pages, oldest first, for analysis. The export that verifies with agent-gateway audit verify is Verifiable export."
        multiline
        w={320}
        withArrow
      >
        <Button
          variant="default"
          leftSection={<IconDownload size={16} />}
          loading={progress !== null}
          onClick={() => void run()}
        >
          Export JSON Lines
        </Button>
      </Tooltip>
      <Text size="xs" c="dimmed">
        {progress !== null ? `${progress} entries read…` : 'Filtered entries, made in the browser'}
      </Text>
      {error ? <ErrorAlert error={error} title="Export failed" /> : null}
    </Stack>
  );
}
