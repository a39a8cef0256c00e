// The official SDK client through /mcp/{serverId}: lists exactly the permitted tools, calls an
// allowed one, gets a denied one's JSON-RPC error (audited, never forwarded).
import { afterEach, expect, it } from 'vitest';
import { describeEachDatabase } from '../support/databases.js';
import { connectWithApiKey, type ProxyFixture, startProxyFixture } from './support.js';

describeEachDatabase('MCP proxy with the SDK client', (kind) => {
  let fixture: ProxyFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('lists the permitted tools, forwards an allowed call and denies a blocked one', async () => {
    fixture = await startProxyFixture(kind);
    const { gateway, upstream, proxyUrl } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id, {
      allowedTools: ['echo', 'read_*', 'fail'],
    });
    await gateway.setPolicy(gateway.tenant.id, { blockedTools: ['fail'] });
    const client = await connectWithApiKey(proxyUrl, gateway.tenant.key, agentId);
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual(['echo', 'read_rows']);
      expect(listed.tools.find((tool) => tool.name === 'read_rows')?.annotations).toEqual({
        readOnlyHint: true,
      });
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      expect(echoed.structuredContent).toEqual({ text: 'hi' });
      expect(upstream.calls.get('echo')).toBe(1);
      const denied = client.callTool({ name: 'fail', arguments: {} });
      await expect(denied).rejects.toThrow(/MCP_METHOD_BLOCKED/);
      const notPermitted = client.callTool({ name: 'drop_table', arguments: { table: 'x' } });
      await expect(notPermitted).rejects.toThrow(/AGENT_TOOL_NOT_ALLOWED/);
      expect(upstream.calls.get('fail')).toBeUndefined();
      expect(upstream.calls.get('drop_table')).toBeUndefined();
      // A usage limit's refusal (docs/limits.md) carries the limit in the JSON-RPC error's data.
      await gateway.setPolicy(gateway.tenant.id, {
        limits: [
          {
            limitId: 'echo_rate',
            per: 'AGENT',
            tools: ['echo'],
            servers: [],
            windowSeconds: 3600,
            maxCalls: 1,
            sumArgument: null,
            maxSum: null,
            action: 'DENY',
          },
        ],
      });
      await gateway.sync();
      await client.callTool({ name: 'echo', arguments: { text: 'once' } });
      const limited = await client.callTool({ name: 'echo', arguments: { text: 'twice' } }).then(
        () => undefined,
        (error: unknown) => error as { data?: Record<string, unknown> },
      );
      expect(limited?.data).toMatchObject({
        reasonCode: 'RATE_LIMIT_EXCEEDED',
        limit: { limitId: 'echo_rate', per: 'AGENT', used: 1, max: 1, windowSeconds: 3600 },
      });
      expect(upstream.calls.get('echo')).toBe(2);
    } finally {
      await client.close();
    }
  });
});
