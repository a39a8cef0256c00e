// The Agents screen: the list at /agents and one agent at /agents/:id (routes nested under the
// screen). Everything here reads agents, which needs agents:manage; killing needs agents:kill,
// and the detail explains its absence where the kill button would be. A key with agents:kill
// alone cannot read agents: it gets the kill form by id or public key instead (an agent's link,
// /agents/:id, fills the id in).
import { Route, Switch } from 'wouter';
import { RequireScope } from '../../components/require-scope.tsx';
import { useSession } from '../../session/session.tsx';
import { AgentDetailPage } from './agent-detail.tsx';
import { AgentsList } from './agents-list.tsx';
import { KillByIdentifier } from './kill-by-identifier.tsx';

function AgentsScreen() {
  const { hasScope } = useSession();
  if (!hasScope('agents:manage') && hasScope('agents:kill')) {
    return (
      <Switch>
        <Route path="/">
          <KillByIdentifier />
        </Route>
        <Route path="/:id">
          {(params) => <KillByIdentifier key={params.id} initial={params.id} />}
        </Route>
      </Switch>
    );
  }
  return (
    <RequireScope scope="agents:manage" to="list, spawn and inspect the tenant's agents">
      <Switch>
        <Route path="/">
          <AgentsList />
        </Route>
        <Route path="/:id">{(params) => <AgentDetailPage key={params.id} id={params.id} />}</Route>
      </Switch>
    </RequireScope>
  );
}

export default AgentsScreen;
