// A gateway that shuts down does not wait out its approval long-polls: each answers the state it
// has (pending) as soon as the server starts closing, so a graceful stop takes moments, not the
// longest wait any agent asked for.
import { expect, it } from 'vitest';
import { inspectBody, RUNTIME_BUS_SUBSCRIPTIONS, startTestGateway } from '../../support/gateway.js';
import { getApproval } from './support.js';

const HOLD_EVERYTHING = {
  version: '1.0.0',
  policyName: 'hold-everything',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'hold',
      action: 'REQUIRE_HUMAN',
      condition: "tool.name == 'echo'",
      alertSeverity: 'LOW',
    },
  ],
};

it('a closing gateway answers its long-polls at once with the current state', async () => {
  const gateway = await startTestGateway('pglite');
  try {
    const { tenant } = gateway;
    const policy = await gateway.publishPolicy(tenant.id, HOLD_EVERYTHING);
    await gateway.setPolicy(tenant.id, { trustedServers: ['files'], pinnedPolicies: [policy] });
    const held = await gateway.inspect(inspectBody(tenant.agentId));
    expect(held.status).toBe(202);
    const id = (held.body.approval as { id: string }).id;

    const poll = getApproval(gateway, id, { wait: 30 });
    // Above the runtime's own subscriptions (from build on).
    while (gateway.runtime.events.subscriberCount <= RUNTIME_BUS_SUBSCRIPTIONS) {
      await new Promise((next) => setImmediate(next));
    }
    const closing = gateway.close();
    const started = Date.now();
    const { status, body } = await poll;
    expect(status).toBe(200);
    expect(body).toMatchObject({ id, status: 'pending' });
    // Far below the 30 s the agent asked for (a generous bound: the poll answers within moments).
    expect(Date.now() - started).toBeLessThan(15_000);
    await closing;
  } finally {
    await gateway.close();
  }
});
