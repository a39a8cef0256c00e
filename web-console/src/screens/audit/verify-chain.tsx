// "Verify chain": the server's chain check (verifyAuditTrail, the same check as `agent-gateway
// audit verify`) over the filter's time range, or the whole trail without one. The other filters
// do not apply: the chain is verified as stored, not as filtered.
import { Alert, Button, Code, Group, Stack, Text } from '@mantine/core';
import { IconShieldCheck } from '@tabler/icons-react';
import type { CombinedError } from '@urql/core';
import { useState } from 'react';
import { useClient } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import type { AuditFilterVariables } from './filters.ts';
import { type AuditVerification, VerifyAuditTrailQuery } from './queries.ts';

function VerificationResult({ result }: { result: AuditVerification }) {
  if (result.ok) {
    return (
      <Alert color="green" title="Chain valid" role="status">
        <Text size="sm">
          {result.count} {result.count === 1 ? 'entry' : 'entries'} checked
          {result.partial ? ' (a range: its link to earlier entries is taken on trust)' : ''}.
        </Text>
        {result.head ? (
          <Text size="sm" style={{ wordBreak: 'break-all' }}>
            Head <Code>{result.head}</Code>
          </Text>
        ) : null}
      </Alert>
    );
  }
  const broken = result.firstBroken;
  return (
    <Alert color="red" title="Chain broken" role="alert">
      {broken ? (
        <Text size="sm">
          First broken entry: index {broken.index}
          {broken.id ? (
            <>
              {' '}
              (id <Code>{broken.id}</Code>)
            </>
          ) : null}{' '}
          — <Code>{broken.code}</Code> {broken.message}
        </Text>
      ) : null}
      <Text size="sm">{result.count} entries verified before it.</Text>
    </Alert>
  );
}

export function VerifyChain({ range }: { range: Pick<AuditFilterVariables, 'from' | 'to'> }) {
  const client = useClient();
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<AuditVerification | null>(null);
  const [error, setError] = useState<CombinedError | null>(null);
  const verify = async () => {
    setRunning(true);
    const answer = await client
      .query(VerifyAuditTrailQuery, range, { requestPolicy: 'network-only' })
      .toPromise();
    setRunning(false);
    setError(answer.error ?? null);
    setResult(answer.data?.verifyAuditTrail ?? null);
  };
  return (
    <Stack gap="xs">
      <Group gap="xs">
        <Button
          variant="light"
          leftSection={<IconShieldCheck size={16} />}
          loading={running}
          onClick={() => void verify()}
        >
          Verify chain
        </Button>
        <Text size="xs" c="dimmed">
          {range.from || range.to
            ? 'Checks the time range of the filters.'
            : 'Checks the whole trail.'}
        </Text>
      </Group>
      {error ? <ErrorAlert error={error} title="Verification failed to run" /> : null}
      {result ? <VerificationResult result={result} /> : null}
    </Stack>
  );
}
