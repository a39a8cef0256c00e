// The MCP proxy's tools/call decisions are counted like inspect's: decisionStats (GraphQL, same
// process) shows a forwarded call as an allow and a refused one as a deny of its tool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, type Loose } from '../control-plane/graphql/support.js';
import { connectWithApiKey, type ProxyFixture, startProxyFixture } from './support.js';

describe('MCP proxy decisions in decisionStats', () => {
  let fixture: ProxyFixture;
  beforeAll(async () => {
    fixture = await startProxyFixture('pglite');
  });
  afterAll(() => fixture.close());

  it('counts an allowed and a denied tools/call', async () => {
    const { gateway, proxyUrl, serverId } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id, { allowedTools: ['echo'] });
    const client = await connectWithApiKey(proxyUrl, gateway.tenant.key, agentId);
    try {
      const allowed = await client.callTool({ name: 'echo', arguments: { text: 'counted' } });
      expect(allowed.isError).not.toBe(true);
      await expect(client.callTool({ name: 'delete_everything', arguments: {} })).rejects.toThrow();
    } finally {
      await client.close();
    }
    const auditor = await gateway.addApiKey(gateway.tenant.id, ['audit:read']);
    const answer = await graphql<Record<string, Loose>>(
      gateway.url,
      auditor,
      '{ decisionStats { totals { outcome count } topDeniedTools { serverId toolName count } } }',
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.decisionStats.totals).toEqual([
      { outcome: 'allow', count: 1 },
      { outcome: 'deny', count: 1 },
      { outcome: 'require_human_approval', count: 0 },
    ]);
    expect(answer.data?.decisionStats.topDeniedTools).toEqual([
      { serverId, toolName: 'delete_everything', count: 1 },
    ]);
  });
});
