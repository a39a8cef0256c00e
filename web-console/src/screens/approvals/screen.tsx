// The Approvals screen: the approvers' home. Reading the queue needs a scope of the `approvals`
// query and `approvalQueue` subscription (control-plane/graphql/schema/approvals.ts:
// approvals:decide or audit:read, so auditors watch it); deciding needs approvals:decide. Each
// gate explains what is missing. `/approvals/<id>` is one approval on a page of its own
// (approval-page.tsx), the link MCP clients give their users when a call is held.
import { Stack, Title } from '@mantine/core';
import { Route, Switch } from 'wouter';
import { decodePathSegment } from '../../components/path-segment.ts';
import { RequireScope } from '../../components/require-scope.tsx';
import { useSession } from '../../session/session.tsx';
import { ApprovalPage } from './approval-page.tsx';
import { ApprovalQueueView } from './approval-queue-view.tsx';

/** The scopes of the `approvals` query and the `approvalQueue` subscription (any one). */
const READ_SCOPES = ['approvals:decide', 'audit:read'];
const DECIDE_SCOPE = 'approvals:decide';

function ApprovalsScreen() {
  const { hasScope } = useSession();
  const canDecide = hasScope(DECIDE_SCOPE);
  return (
    <Stack>
      <Title order={2}>Approvals</Title>
      <RequireScope scope={READ_SCOPES} to="see the calls held for approval and decide them">
        <Switch>
          <Route path="/:id">
            {(params) => (
              <ApprovalPage
                key={params.id}
                id={decodePathSegment(params.id)}
                canDecide={canDecide}
                decideScope={DECIDE_SCOPE}
              />
            )}
          </Route>
          <Route>
            <ApprovalQueueView canDecide={canDecide} decideScope={DECIDE_SCOPE} />
          </Route>
        </Switch>
      </RequireScope>
    </Stack>
  );
}

export default ApprovalsScreen;
