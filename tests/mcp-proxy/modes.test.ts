// Execution modes through the proxy (issue 14 item 4): production by default; the tenant's
// proxyExecutionMode, an agent's own executionMode (which wins), and X-Execution-Mode where the
// tenant allows the header.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateAgent } from '../../control-plane/services/agents.js';
import { connectWithApiKey, type ProxyFixture, startProxyFixture } from './support.js';

describe('MCP proxy execution modes', () => {
  let fixture: ProxyFixture;
  beforeAll(async () => {
    fixture = await startProxyFixture('pglite');
  });
  afterAll(() => fixture.close());

  const echo = async (agentId: string, headers: Record<string, string> = {}) => {
    const { gateway, proxyUrl } = fixture;
    const client = await connectWithApiKey(proxyUrl, gateway.tenant.key, agentId, headers);
    try {
      return await client.callTool({ name: 'echo', arguments: { text: 'mode' } });
    } finally {
      await client.close();
    }
  };
  const echoCalls = () => fixture.upstream.calls.get('echo') ?? 0;

  it('simulates for the tenant, forwards for an agent set to production, obeys an allowed header', async () => {
    const { gateway, serverId } = fixture;
    const tenantId = gateway.tenant.id;
    const agentId = await gateway.addAgent(tenantId);
    const productionAgent = await gateway.addAgent(tenantId);
    await updateAgent(gateway.db, tenantId, productionAgent, { executionMode: 'production' });
    await gateway.sync();

    const forwarded = await echo(agentId);
    expect(forwarded.structuredContent).toEqual({ text: 'mode' });
    expect(echoCalls()).toBe(1);

    await gateway.setPolicy(tenantId, {
      trustedServers: [serverId],
      proxyExecutionMode: 'simulation',
    });
    const simulated = await echo(agentId);
    expect(simulated).toMatchObject({ _meta: { simulated: true } });
    expect(echoCalls()).toBe(1);
    expect((await echo(productionAgent)).structuredContent).toEqual({ text: 'mode' });
    expect(echoCalls()).toBe(2);

    // The header is ignored until the tenant allows it.
    await echo(agentId, { 'x-execution-mode': 'production' });
    expect(echoCalls()).toBe(2);
    await gateway.setPolicy(tenantId, { trustedServers: [serverId], proxyModeHeader: true });
    await echo(agentId, { 'x-execution-mode': 'production' });
    expect(echoCalls()).toBe(3);
  });
});
