import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';

describeEachDatabase('inspect end to end', (kind) => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    await gateway.setPolicy(gateway.tenant.id, { trustedServers: ['files'] });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('allows a whitelisted call in simulation mode with a simulated response', async () => {
    const { status, body } = await gateway.inspect(inspectBody(gateway.tenant.agentId));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      decision: 'allow',
      reasonCode: null,
      executionMode: 'simulation',
      enforced: true,
      simulated: true,
      response: { jsonrpc: '2.0', id: 1 },
    });
  });

  it('denies a server that is not whitelisted and audits it before answering', async () => {
    const { status, body } = await gateway.inspect(
      inspectBody(gateway.tenant.agentId, { server: 'elsewhere' }),
    );
    expect(status).toBe(403);
    expect(body).toMatchObject({ decision: 'deny', reasonCode: 'MCP_SERVER_NOT_WHITELISTED' });
    const rows = await gateway.db.query<{ id: string; action: string }>(
      'select id, action from audit_entries where id = $1',
      [body.auditId],
    );
    expect(rows).toEqual([{ id: body.auditId, action: 'inspect.deny' }]);
  });
});
