// Bridging eras (issue 28, §3), the other way: a session client (the official SDK 1.x, 2025-11-25)
// in front of an upstream that speaks only the stateless era is served: the gateway keeps the
// session, answers initialize from the server's server/discover, and sends each request upstream
// as a stateless one (upstream/stateless-session.ts):
// - against the raw stateless test server: what it receives is exactly this era's (the `_meta`,
//   the headers, no session id); tools/list filtered; a call forwarded, a denied one audited and
//   not forwarded; the server's own InputRequiredResult reaches the client as an elicitation
//   request, whose answer completes the call; ping is answered by the gateway; a cancelled call's
//   exchange is closed upstream (this era's cancellation); registering the server learns its tools
//   (the inspect forwarder speaks the stateless era to it);
// - against an SDK v2 server that refuses the session era: list and call.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import { graphql } from '../control-plane/graphql/support.js';
import { findAuditEntry } from '../data-plane/inspect/support.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { type McpV2Upstream, startMcpV2Upstream } from '../support/mcp-v2-upstream.js';
import {
  CONFIRM_STATE,
  type StatelessTestUpstream,
  startStatelessUpstream,
} from '../support/stateless-upstream.js';
import { apiKeyHeaders } from './transport-support.js';

describeEachDatabase('a session client in front of a stateless-only upstream', (kind) => {
  let gateway: TestGateway;
  let upstream: StatelessTestUpstream;
  let v2: McpV2Upstream;
  let headers: Record<string, string>;

  beforeAll(async () => {
    upstream = await startStatelessUpstream();
    v2 = await startMcpV2Upstream({ legacy: 'reject' });
    // A silent upstream is never cut by the read timeout here: only a cancellation ends `wait`.
    gateway = await startTestGateway(kind, { mcpLimits: { readTimeoutMs: 600_000 } });
    const tenantId = gateway.tenant.id;
    await gateway.registerServer({ tenantId, serverId: 'modern', url: upstream.url });
    await gateway.registerServer({ tenantId, serverId: 'v2', url: v2.url });
    await gateway.setPolicy(tenantId, { trustedServers: ['modern', 'v2'] });
    const agentId = await gateway.addAgent(tenantId, {
      allowedTools: ['echo', 'confirm', 'wait'],
    });
    headers = apiKeyHeaders(gateway.tenant.key, agentId);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await v2?.close();
  });

  async function connect(serverId: string, elicited: unknown[] = []): Promise<Client> {
    const client = new Client(
      { name: 'session-bridge-test', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params);
      return { action: 'accept', content: {} };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${serverId}`), {
        requestInit: { headers },
      }),
    );
    return client;
  }

  it('learns a stateless-only server’s tools at registration (the forwarder speaks its era)', async () => {
    const admin = await gateway.addApiKey(gateway.tenant.id, [...ALL_SCOPES]);
    const answer = await graphql<{ registerMcpServer: Record<string, unknown> }>(
      gateway.url,
      admin,
      `mutation($input: RegisterMcpServerInput!) { registerMcpServer(input: $input) {
        toolsRefreshedAt toolsRefreshError toolDigests } }`,
      { input: { serverId: `modern-${kind}`, url: upstream.url } },
    );
    expect(answer.errors).toBeUndefined();
    const server = answer.data?.registerMcpServer;
    expect(server?.toolsRefreshError).toBeNull();
    expect(server?.toolsRefreshedAt).toEqual(expect.any(String));
    expect(Object.keys(server?.toolDigests as object).sort()).toEqual(['echo', 'secret_tool']);
  });

  it('serves the session over stateless requests: discover, list, call, deny, ping', async () => {
    const client = await connect('modern');
    try {
      expect(client.getServerVersion()).toEqual({ name: 'stateless-test', version: '1' });
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual(['echo']);
      expect(listed).not.toHaveProperty('ttlMs');
      expect(listed).not.toHaveProperty('cacheScope');

      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'héllo' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'héllo' }]);
      expect(echoed).not.toHaveProperty('resultType');
      const sent = upstream.log.at(-1)!;
      expect(sent.headers['mcp-protocol-version']).toBe('2026-07-28');
      expect(sent.headers['mcp-method']).toBe('tools/call');
      expect(sent.headers['mcp-name']).toBe('echo');
      expect(sent.headers['mcp-session-id']).toBeUndefined();
      expect(sent.body.params._meta).toMatchObject({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'session-bridge-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
      });

      const before = upstream.log.length;
      const denied = await client.callTool({ name: 'secret_tool', arguments: {} }).then(
        () => undefined,
        (error: unknown) =>
          error as { code?: number; data?: { reasonCode?: string; auditId?: string } },
      );
      expect(denied).toMatchObject({
        code: -32001,
        data: { reasonCode: 'AGENT_TOOL_NOT_ALLOWED' },
      });
      expect(await findAuditEntry(gateway.db, denied?.data?.auditId)).toMatchObject({
        action: 'inspect.deny',
      });
      await client.ping();
      expect(upstream.log.length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('puts the upstream’s InputRequiredResult to the client as an elicitation, and completes the call with its answer', async () => {
    const elicited: unknown[] = [];
    const client = await connect('modern', elicited);
    try {
      const result = await client.callTool({ name: 'confirm', arguments: { text: 'deploy' } });
      expect(result.content).toEqual([{ type: 'text', text: 'confirmed deploy' }]);
      expect(elicited).toEqual([
        { mode: 'form', message: 'Confirm?', requestedSchema: { type: 'object', properties: {} } },
      ]);
      const retried = upstream.log.at(-1)!.body.params;
      expect(retried.requestState).toBe(CONFIRM_STATE);
      expect(retried.inputResponses).toEqual({ confirm: { action: 'accept', content: {} } });
    } finally {
      await client.close();
    }
  });

  it('closes the upstream exchange of a call the client cancels', async () => {
    const client = await connect('modern');
    try {
      const before = upstream.cancelled;
      const controller = new AbortController();
      const call = client.callTool({ name: 'wait', arguments: {} }, undefined, {
        signal: controller.signal,
      });
      await expect
        .poll(() => upstream.log.filter((r) => r.body?.params?.name === 'wait').length, {
          timeout: 30_000,
          interval: 20,
        })
        .toBeGreaterThan(0);
      controller.abort(new Error('the user gave up'));
      await expect(call).rejects.toThrow();
      await expect
        .poll(() => upstream.cancelled, { timeout: 30_000, interval: 20 })
        .toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it('serves a session client of an SDK v2 server that refuses the session era', async () => {
    const client = await connect('v2');
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toEqual(['echo']);
      const before = v2.calls.get('echo') ?? 0;
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'bridged' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'bridged' }]);
      expect(v2.calls.get('echo')).toBe(before + 1);
    } finally {
      await client.close();
    }
  });
});
