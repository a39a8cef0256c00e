// The tools of every tools/list answer that passes through inspect are learnt: after an agent's
// forwarded tools/list, a tool the upstream annotates destructiveHint: true under a harmless name
// is blocked with denyDestructive. Recording happens after the answer; the same list passing
// again writes nothing. Real gateway, the official MCP SDK as upstream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../support/mcp-upstream.js';
import { expectDeny, quickDatabaseKind } from './inspect/support.js';

describe('tool definitions learnt from tools/list answers passing through', () => {
  let gw: TestGateway;
  let upstream: McpUpstream;

  beforeAll(async () => {
    upstream = await startMcpUpstream({
      responseMode: 'sse',
      stateful: true,
      extraTools: [{ name: 'rotate_index', annotations: { destructiveHint: true } }],
    });
    gw = await startTestGateway(quickDatabaseKind);
    // Registered through the service: nothing is learnt at registration here.
    await gw.registerServer({ tenantId: gw.tenant.id, serverId: 'files', url: upstream.url });
    await gw.setPolicy(gw.tenant.id, { trustedServers: ['files'], denyDestructive: true });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  const listTools = () => {
    const body = inspectBody(gw.tenant.agentId, { mode: 'production', tool: 'tools/list' });
    body.request = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} };
    return gw.inspect(body);
  };
  const passthroughCount = async (outcome: string) => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const prefix = `agent_gateway_tool_refreshes_total{trigger="passthrough",outcome="${outcome}"}`;
    const line = text.split('\n').find((row) => row.startsWith(prefix));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };

  it('blocks rotate_index once a forwarded tools/list declared it destructive', async () => {
    const listed = await listTools();
    expect(listed.status).toBe(200);
    expect(listed.body.decision).toBe('allow');
    const tools = (listed.body.response as { result: { tools: { name: string }[] } }).result.tools;
    expect(tools.map((tool) => tool.name)).toContain('rotate_index');

    await gw.runtime.listedTools.idle();
    expect(await passthroughCount('changed')).toBe(1);
    const row = await gw.db.prisma.mcpServer.findFirstOrThrow({ where: { serverId: 'files' } });
    expect((row.toolAnnotations as Record<string, unknown>).rotate_index).toEqual({
      annotations: { destructiveHint: true },
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });

    const requests = upstream.requests;
    const denied = await gw.inspect(
      inspectBody(gw.tenant.agentId, { mode: 'production', tool: 'rotate_index', args: {} }),
    );
    await expectDeny(gw, denied, {
      status: 403,
      reasonCode: 'MCP_DESTRUCTIVE_OP_BLOCKED',
      tenantId: gw.tenant.id,
    });
    expect(upstream.requests).toBe(requests);
    expect(upstream.calls.get('rotate_index')).toBeUndefined();
  });

  it('writes nothing when the same list passes again', async () => {
    const version = async () =>
      (await gw.db.prisma.tenant.findUniqueOrThrow({ where: { id: gw.tenant.id } })).configVersion;
    const before = await version();
    expect((await listTools()).status).toBe(200);
    await gw.runtime.listedTools.idle();
    expect(await version()).toBe(before);
    expect(await passthroughCount('changed')).toBe(1);
    expect(await passthroughCount('unchanged')).toBe(0);
  });
});
