// "Verify chain": the server's chain check (verifyAuditTrail, the same check as `agent-gateway
// audit verify`) over the filter's time range, or the whole trail without one, and then those
// entries against the tenant's latest signed checkpoint (its root, or an inclusion proof for a
// range), so a history rewritten after the checkpoint shows here though its chain is whole. The
// other filters do not apply: the chain is verified as stored, not as filtered.
import { Alert, Button, Code, Stack, Text, Tooltip } from '@mantine/core';
import { IconShieldCheck } from '@tabler/icons-react';
import type { CombinedError } from '@urql/core';
import { useState } from 'react';
import { useClient } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { countEntries } from './anchoring-fields.ts';
import type { AuditFilterVariables } from './filters.ts';
import { type AuditVerification, VerifyAuditTrailQuery } from './queries.ts';

type CheckpointCheck = NonNullable<AuditVerification['checkpoint']>;

/** What the checkpoint says of the entries checked, in a sentence. */
function CheckpointLine({ check, count }: { check: CheckpointCheck; count: number }) {
  const signer = check.signedBy ? (
    <>
      , signed by <Code>{check.signedBy}</Code>
    </>
  ) : null;
  const witnesses =
    check.cosignedBy.length > 0 ? `, cosigned by ${check.cosignedBy.join(', ')}` : '';
  if (check.status === 'MATCHED') {
    const newer = count - check.treeSize;
    return (
      <Text size="sm" data-testid="anchor-outcome">
        The first {countEntries(check.treeSize)} are exactly the history of the latest checkpoint
        {signer}
        {witnesses}.
        {newer > 0 ? ` ${countEntries(newer)} appended since are chained, not yet anchored.` : ''}
      </Text>
    );
  }
  if (check.status === 'PROVEN') {
    return (
      <Text size="sm" data-testid="anchor-outcome">
        An inclusion proof puts the range in the latest checkpoint of {countEntries(check.treeSize)}
        {signer}
        {witnesses}.
      </Text>
    );
  }
  return (
    <Text size="sm" data-testid="anchor-outcome">
      The range is newer than the latest checkpoint ({countEntries(check.treeSize)}): its entries
      are chained, not yet anchored.
    </Text>
  );
}

function VerificationResult({ result }: { result: AuditVerification }) {
  const broken = result.firstBroken;
  if (broken) {
    return (
      <Alert color="red" title="Chain broken" role="alert">
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
        <Text size="sm">{result.count} entries verified before it.</Text>
      </Alert>
    );
  }
  const check = result.checkpoint;
  if (check && !check.ok) {
    return (
      <Alert color="red" title="Not the history the checkpoint signed" role="alert">
        <Text size="sm">
          The chain of {countEntries(result.count)} is whole, but it does not match the latest
          signed checkpoint ({countEntries(check.treeSize)}, signed{' '}
          <span title={check.createdAt}>{new Date(check.createdAt).toLocaleString()}</span>):
          entries were changed, removed or cut off after it was signed.
        </Text>
        <Stack gap={2} mt="xs" data-testid="anchor-findings">
          {check.findings.map((finding) => (
            <Text size="sm" key={`${finding.code} ${finding.message}`}>
              <Code>{finding.code}</Code> {finding.message}
            </Text>
          ))}
        </Stack>
      </Alert>
    );
  }
  return (
    <Alert color="green" title={check ? 'Chain valid and anchored' : 'Chain valid'} role="status">
      <Text size="sm">
        {countEntries(result.count)} checked
        {result.partial ? ' (a range: its link to earlier entries is taken on trust)' : ''}.
      </Text>
      {check ? (
        <CheckpointLine check={check} count={result.count} />
      ) : (
        <Text size="sm">No signed checkpoint yet: the chain is checked, not anchored.</Text>
      )}
      {result.head ? (
        <Text size="sm" style={{ wordBreak: 'break-all' }}>
          Head <Code>{result.head}</Code>
        </Text>
      ) : null}
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
export function useChainCheck(
  range: Pick<AuditFilterVariables, 'from' | 'to'>,
  onChecked?: () => void,
): ChainCheck {
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
        onChecked?.();
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
