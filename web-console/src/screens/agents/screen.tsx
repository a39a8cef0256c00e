// The Agents screen: the list at /agents and one agent at /agents/:id (routes nested under the
// screen). Everything here reads agents, which needs agents:manage; killing needs agents:kill,
// and the detail explains its absence where the kill button would be.
import { Route, Switch } from 'wouter';
import { RequireScope } from '../../components/require-scope.tsx';
import { AgentDetailPage } from './agent-detail.tsx';
import { AgentsList } from './agents-list.tsx';

function AgentsScreen() {
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
