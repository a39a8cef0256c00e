// The verifiable export: the gateway's own export of the tenant's chain (GET /api/v1/audit/export,
// audit:read), which `agent-gateway audit verify` checks entry by entry. Only the filters' time
// range applies: a chain cannot skip entries, so action, agent and decision filters do not.
import { Alert, Button, Code, Text, Tooltip } from '@mantine/core';
import { IconShieldDown } from '@tabler/icons-react';
import { useState } from 'react';
import { saveFile } from '../../components/save-file.ts';
import { useSession } from '../../session/session.tsx';
import type { AuditFilterVariables } from './filters.ts';

export const AUDIT_EXPORT_PATH = '/api/v1/audit/export';

export function VerifiableExportButton({ variables }: { variables: AuditFilterVariables }) {
  const { authHeaders } = useSession();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const slice = Boolean(variables.from || variables.to);

  const run = async () => {
    setBusy(true);
    setProblem(null);
    try {
      const query = new URLSearchParams();
      if (variables.from) query.set('from', variables.from);
      if (variables.to) query.set('to', variables.to);
      const response = await fetch(`${AUDIT_EXPORT_PATH}${query.size ? `?${query}` : ''}`, {
        headers: authHeaders,
      });
      if (!response.ok) {
        const body = (await response.json().catch(() => null)) as {
          reasonCode?: string;
          message?: string;
        } | null;
        setProblem(`${body?.reasonCode ?? response.status}: ${body?.message ?? 'export refused'}`);
        return;
      }
      const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '');
      saveFile(name?.[1] ?? 'audit-export.json', await response.blob());
    } catch {
      setProblem('The gateway cannot be reached.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <Tooltip
        label={
          slice
            ? 'The chain between From and To, as the gateway exports it; verify it with agent-gateway audit verify --partial.'
            : 'The whole chain as the gateway exports it; verify it with agent-gateway audit verify.'
        }
        multiline
        w={320}
        withArrow
      >
        <Button
          variant="default"
          leftSection={<IconShieldDown size={16} />}
          loading={busy}
          onClick={() => void run()}
        >
          Verifiable export
        </Button>
      </Tooltip>
      {problem ? (
        <Alert color="red" role="alert" title="Export refused">
          <Text size="sm">
            <Code>{problem}</Code>
          </Text>
        </Alert>
      ) : null}
    </>
  );
}
