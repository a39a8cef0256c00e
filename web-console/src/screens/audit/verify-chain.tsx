// "Verify chain": the server's chain check (verifyAuditTrail, the same check as `agent-gateway
// audit verify`) over the filter's time range, or the whole trail without one. The other filters
// do not apply: the chain is verified as stored, not as filtered.
import { Alert, Button, Code, Text, Tooltip } from '@mantine/core';
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

export interface ChainCheck {
  readonly running: boolean;
  readonly result: AuditVerification | null;
  readonly error: CombinedError | null;
  run(): void;
}

/** Runs verifyAuditTrail over the range on request and keeps its latest outcome. */
export function useChainCheck(range: Pick<AuditFilterVariables, 'from' | 'to'>): ChainCheck {
  const client = useClient();
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<AuditVerification | null>(null);
  const [error, setError] = useState<CombinedError | null>(null);
  const run = () => {
    setRunning(true);
    void client
      .query(VerifyAuditTrailQuery, range, { requestPolicy: 'network-only' })
      .toPromise()
      .then((answer) => {
        setRunning(false);
        setError(answer.error ?? null);
        setResult(answer.data?.verifyAuditTrail ?? null);
      });
  };
  return { running, result, error, run };
}

export function VerifyChainButton({
  check,
  ranged,
}: {
  check: ChainCheck;
  /** Whether the filters name a time range (only that range is checked). */
  ranged: boolean;
}) {
  return (
    <Tooltip
      label={ranged ? 'Checks the time range of the filters' : 'Checks the whole trail'}
      withArrow
    >
      <Button
        variant="light"
        leftSection={<IconShieldCheck size={16} />}
        loading={check.running}
        onClick={check.run}
      >
        Verify chain
      </Button>
    </Tooltip>
  );
}

export function ChainCheckOutcome({ check }: { check: ChainCheck }) {
  if (check.error) return <ErrorAlert error={check.error} title="Verification failed to run" />;
  return check.result ? <VerificationResult result={check.result} /> : null;
}
