// The Approvals screen: the approvers' home. Reading the queue needs a scope of the `approvals`
// query and `approvalQueue` subscription (control-plane/graphql/schema/approvals.ts:
// approvals:decide or audit:read, so auditors watch it); deciding needs approvals:decide. Each
// gate explains what is missing.
import { Stack, Title } from '@mantine/core';
import { RequireScope } from '../../components/require-scope.tsx';
import { useSession } from '../../session/session.tsx';
import { ApprovalQueueView } from './approval-queue-view.tsx';

/** The scopes of the `approvals` query and the `approvalQueue` subscription (any one). */
const READ_SCOPES = ['approvals:decide', 'audit:read'];
const DECIDE_SCOPE = 'approvals:decide';

function ApprovalsScreen() {
  const { hasScope } = useSession();
  return (
    <Stack>
      <Title order={2}>Approvals</Title>
      <RequireScope scope={READ_SCOPES} to="see the calls held for approval and decide them">
        <ApprovalQueueView canDecide={hasScope(DECIDE_SCOPE)} decideScope={DECIDE_SCOPE} />
      </RequireScope>
    </Stack>
  );
}

export default ApprovalsScreen;
