// The official TypeScript SDK v2 (`@modelcontextprotocol/client` and `/server` 2.4.0, the
// release line of MCP 2026-07-28) through /mcp/{serverId}, as independent implementations of
// the stateless era: a client pinned to 2026-07-28 and one negotiating (`auto`) both reach an SDK
// v2 server statelessly; lists come back private with the gateway's TTL; a call the agent may
// make is forwarded and one it may not is a JSON-RPC error the SDK surfaces; and a client of
// either mode in front of a session-era upstream (SDK 1.x) is served statelessly, the gateway
// bridging to an upstream session (bridge-stateless-client.test.ts).
// A held call reaches the SDK as an InputRequiredResult: its URL-elicitation handler gets the
// approval's console page, and its automatic retry gets the upstream's result once approved; a
// client without URL elicitation gets -32021 naming the capability.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import { graphql } from '../control-plane/graphql/support.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../support/mcp-upstream.js';
import { type McpV2Upstream, startMcpV2Upstream } from '../support/mcp-v2-upstream.js';
import { HOLD_ECHO_POLICY } from './support.js';
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

  async function connect(
    serverId: string,
    mode: 'auto' | { pin: string },
    prepare?: (client: Client) => void,
  ): Promise<Client> {
    const client = new Client(
      { name: 'sdk-v2-test', version: '1.0.0' },
      {
        versionNegotiation: { mode },
        ...(prepare ? { capabilities: { elicitation: { url: {} } } } : {}),
      },
    );
    prepare?.(client);
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

  it.each([
    ['pinned to 2026-07-28', { pin: '2026-07-28' }],
    ['negotiating', 'auto'],
  ] as const)(
    'a client %s in front of a session-era upstream is served in its era, bridged',
    async (_case, mode) => {
      const client = await connect('v1', mode);
      try {
        expect(client.getProtocolEra()).toBe('modern');
        const echoed = await client.callTool({ name: 'echo', arguments: { text: 'old' } });
        expect(echoed.isError).not.toBe(true);
        expect(echoed.structuredContent).toEqual({ text: 'old' });
      } finally {
        await client.close();
      }
    },
  );

  it('a held call: the approval page to the URL-elicitation handler, the result on the automatic retry; -32021 without it', async () => {
    const tenantId = gateway.tenant.id;
    const admin = await gateway.addApiKey(tenantId, [...ALL_SCOPES]);
    const uri = await gateway.publishPolicy(tenantId, HOLD_ECHO_POLICY);
    await gateway.setPolicy(tenantId, { trustedServers: ['v2', 'v1'], pinnedPolicies: [uri] });
    await gateway.sync();
    const pages: string[] = [];
    const client = await connect('v2', { pin: '2026-07-28' }, (c) => {
      // The user opens the page, where an operator approves (here: the same mutation).
      c.setRequestHandler('elicitation/create', async (request) => {
        const params = request.params as { mode?: string; url?: string };
        pages.push(`${params.mode} ${params.url}`);
        const approvalId = decodeURIComponent(String(params.url).split('/').at(-1) ?? '');
        const answer = await graphql(
          gateway.url,
          admin,
          `mutation($id: ID!) { approveApproval(id: $id) { status } }`,
          { id: approvalId },
        );
        expect(answer.errors).toBeUndefined();
        return { action: 'accept' };
      });
    });
    const plain = await connect('v2', { pin: '2026-07-28' });
    try {
      const before = modern.calls.get('echo') ?? 0;
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'needs-human' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'needs-human' }]);
      expect(modern.calls.get('echo')).toBe(before + 1);
      expect(pages).toEqual([
        expect.stringMatching(new RegExp(`^url ${gateway.url}/console/approvals/[^/]+$`)),
      ]);

      const refused = await plain
        .callTool({ name: 'echo', arguments: { text: 'needs-human' } })
        .then(
          () => undefined,
          (error: unknown) => error as { code?: number; data?: Record<string, unknown> },
        );
      // The SDK's typed error keeps requiredCapabilities of data; the page is in the message.
      expect(refused).toMatchObject({
        code: -32021,
        message: expect.stringContaining(`${gateway.url}/console/approvals/`),
        data: { requiredCapabilities: { elicitation: { url: {} } } },
      });
      expect(modern.calls.get('echo')).toBe(before + 1);
    } finally {
      await client.close();
      await plain.close();
      await gateway.setPolicy(tenantId, { trustedServers: ['v2', 'v1'], pinnedPolicies: [] });
    }
  });
});
