// The official TypeScript SDK v2 (`@modelcontextprotocol/client` and `/server` 2.4.0, the
// release line of MCP 2026-07-28) through /mcp/{serverId}, as independent implementations of
// the stateless era: a client pinned to 2026-07-28 and one negotiating (`auto`) both reach an SDK
// v2 server statelessly; lists come back private with the gateway's TTL; a call the agent may
// make is forwarded and one it may not is a JSON-RPC error the SDK surfaces; and an `auto` client
// in front of a session-era upstream (SDK 1.x) is steered to initialize by the gateway's -32022.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../support/mcp-upstream.js';
import { type McpV2Upstream, startMcpV2Upstream } from '../support/mcp-v2-upstream.js';
import { apiKeyHeaders } from './transport-support.js';

describe('the official SDK v2 through the proxy', () => {
  let gateway: TestGateway;
  let modern: McpV2Upstream;
  let legacy: McpUpstream;
  let headers: Record<string, string>;

  beforeAll(async () => {
    modern = await startMcpV2Upstream({ legacy: 'reject' });
    legacy = await startMcpUpstream({ responseMode: 'json', stateful: true });
    gateway = await startTestGateway('pglite');
    const tenantId = gateway.tenant.id;
    await gateway.registerServer({ tenantId, serverId: 'v2', url: modern.url });
    await gateway.registerServer({ tenantId, serverId: 'v1', url: legacy.url });
    await gateway.setPolicy(tenantId, { trustedServers: ['v2', 'v1'] });
    const agentId = await gateway.addAgent(tenantId, { allowedTools: ['echo'] });
    headers = apiKeyHeaders(gateway.tenant.key, agentId);
  });
  afterAll(async () => {
    await gateway?.close();
    await modern?.close();
    await legacy?.close();
  });

  async function connect(serverId: string, mode: 'auto' | { pin: string }): Promise<Client> {
    const client = new Client(
      { name: 'sdk-v2-test', version: '1.0.0' },
      { versionNegotiation: { mode } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${serverId}`), {
      requestInit: { headers },
    });
    await client.connect(transport);
    return client;
  }

  it.each([
    ['pinned to 2026-07-28', { pin: '2026-07-28' }],
    ['negotiating', 'auto'],
  ] as const)('a client %s is served statelessly, governed and filtered', async (_case, mode) => {
    const client = await connect('v2', mode);
    try {
      expect(client.getProtocolEra()).toBe('modern');
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toEqual(['echo']);
      expect(listed).toMatchObject({ cacheScope: 'private', ttlMs: 60_000 });

      const before = modern.calls.get('echo') ?? 0;
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'through' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'through' }]);
      expect(modern.calls.get('echo')).toBe(before + 1);

      const denied = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }).then(
        () => undefined,
        (error: unknown) => error as { code?: number; data?: unknown },
      );
      expect(denied).toMatchObject({
        code: -32001,
        data: { reasonCode: 'AGENT_TOOL_NOT_ALLOWED' },
      });
      expect(modern.calls.get('add')).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('a negotiating client in front of a session-era upstream falls back to initialize', async () => {
    const client = await connect('v1', 'auto');
    try {
      expect(client.getProtocolEra()).toBe('legacy');
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'old' } });
      expect(echoed.isError).not.toBe(true);
    } finally {
      await client.close();
    }
  });
});
