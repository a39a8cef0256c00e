// The MCP adapter with a real MCP SDK Client connected (Streamable HTTP) to a real SDK server
// (tests/support/mcp-upstream.ts), against a real gateway where that server is registered: an
// allowed call is inspected and then made once by the agent's own client (the gateway forwards
// nothing); a denied call is an isError result naming the reasonCode and never reaches the
// server; a held call is made once a test approver approves it over GraphQL; a killed agent's
// callTool throws AgentRevoked; listTools can hide what the agent's allowedTools never allow.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { governMcpTools } from '../../../client/src/adapters/ai-sdk.js';
import { DENIAL_META_KEY, governMcpClient } from '../../../client/src/adapters/mcp.js';
import { AgentRevoked } from '../../../client/src/index.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { type AdapterFixture, MCP_SERVER_ID, startAdapterFixture } from './fixture.js';

describe('mcp adapter: governMcpClient over a real MCP SDK client and server', () => {
  let fixture: AdapterFixture;
  let upstream: McpUpstream;
  const mcpClients: Client[] = [];

  async function connect(): Promise<Client> {
    const mcpClient = new Client({ name: 'adapter-test-agent', version: '1.0.0' });
    await mcpClient.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
    mcpClients.push(mcpClient);
    return mcpClient;
  }

  const calls = (tool: string) => upstream.calls.get(tool) ?? 0;
  /** tools/call requests that reached the server (its client also opens streams, asynchronously). */
  const toolCallRequests = () => upstream.log.filter((r) => r.rpcMethod === 'tools/call').length;

  beforeAll(async () => {
    upstream = await startMcpUpstream({
      responseMode: 'json',
      stateful: true,
      extraTools: [{ name: 'export_customers' }, { name: 'wire_transfer' }],
    });
    fixture = await startAdapterFixture();
    await fixture.registerMcpServer(upstream.url);
  });
  afterAll(async () => {
    await Promise.all(mcpClients.map((c) => c.close()));
    await fixture?.close();
    await upstream?.close();
  });

  it('lists the server tools as the MCP client does', async () => {
    const { client } = await fixture.newAgent();
    const mcpClient = await connect();
    const governed = governMcpClient(client, mcpClient, { serverId: MCP_SERVER_ID });
    expect(await governed.listTools()).toEqual(await mcpClient.listTools());
  });

  it('inspects an allowed call, then makes it once through the agent client', async () => {
    const { client } = await fixture.newAgent();
    const mcpClient = await connect();
    const governed = governMcpClient(client, mcpClient, { serverId: MCP_SERVER_ID });
    const before = calls('echo');
    const result = await governed.callTool({ name: 'echo', arguments: { text: 'hello' } });
    expect(result).toMatchObject({
      content: [{ type: 'text', text: '{"text":"hello"}' }],
      structuredContent: { text: 'hello' },
    });
    expect(result.isError).toBeUndefined();
    // Once: the agent's client called; the gateway decided and forwarded nothing.
    expect(calls('echo')).toBe(before + 1);
    expect(upstream.log.filter((r) => r.authorization !== undefined)).toEqual([]);
  });

  it('answers a denied call with an isError result naming the reasonCode; the server sees nothing', async () => {
    const { client } = await fixture.newAgent();
    const mcpClient = await connect();
    const governed = governMcpClient(client, mcpClient, { serverId: MCP_SERVER_ID });
    const requests = toolCallRequests();
    const result = await governed.callTool({
      name: 'export_customers',
      arguments: { format: 'csv' },
    });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      { type: 'text', text: expect.stringContaining('NPL_POLICY_BLOCK') },
    ]);
    expect(result._meta?.[DENIAL_META_KEY]).toMatchObject({
      reasonCode: 'NPL_POLICY_BLOCK',
      ruleId: 'block_export',
      inspectionId: expect.any(String),
    });
    expect(toolCallRequests()).toBe(requests);
    expect(calls('export_customers')).toBe(0);
  });

  it('makes a held call once a test approver approves it over GraphQL', async () => {
    const { client, agentId } = await fixture.newAgent();
    const mcpClient = await connect();
    const governed = governMcpClient(client, mcpClient, { serverId: MCP_SERVER_ID });
    const approver = await fixture.approver(agentId);
    const result = await governed.callTool({
      name: 'wire_transfer',
      arguments: { to: 'acme', amount: 50_000 },
    });
    expect(await approver.approved).toEqual(expect.any(String));
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'done' }] });
    expect(calls('wire_transfer')).toBe(1);
  });

  it('answers a held call the approver rejects with an isError result; the server sees nothing', async () => {
    const { client, agentId } = await fixture.newAgent();
    const mcpClient = await connect();
    const governed = governMcpClient(client, mcpClient, { serverId: MCP_SERVER_ID });
    const approver = await fixture.approver(agentId, 'reject');
    const before = calls('wire_transfer');
    const result = await governed.callTool({
      name: 'wire_transfer',
      arguments: { to: 'acme', amount: 70_000 },
    });
    const approvalId = await approver.approved;
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      { type: 'text', text: expect.stringContaining('APPROVAL_REJECTED') },
    ]);
    expect(result._meta?.[DENIAL_META_KEY]).toEqual({
      reasonCode: 'APPROVAL_REJECTED',
      approvalId,
    });
    expect(calls('wire_transfer')).toBe(before);
  });

  it('throws AgentRevoked out of callTool once the agent is killed, and calls nothing', async () => {
    const { client, publicKey } = await fixture.newAgent();
    const mcpClient = await connect();
    const governed = governMcpClient(client, mcpClient, { serverId: MCP_SERVER_ID });
    await fixture.kill(publicKey);
    const before = calls('echo');
    await expect(
      governed.callTool({ name: 'echo', arguments: { text: 'x' } }),
    ).rejects.toBeInstanceOf(AgentRevoked);
    expect(calls('echo')).toBe(before);
  });

  it('with onlyAllowedTools, lists only what the agent allowedTools allow', async () => {
    const { client } = await fixture.newAgent({ allowedTools: ['echo', 'read_*'] });
    const mcpClient = await connect();
    const governed = governMcpClient(client, mcpClient, {
      serverId: MCP_SERVER_ID,
      onlyAllowedTools: true,
    });
    const { tools } = await governed.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'read_rows']);
    const denied = await governed.callTool({ name: 'slow', arguments: { ms: 0 } });
    expect(denied._meta?.[DENIAL_META_KEY]).toMatchObject({ reasonCode: 'AGENT_TOOL_NOT_ALLOWED' });
  });

  it('offers the server tools to an AI SDK loop, governed: allowed calls reach the server, denied ones do not', async () => {
    const { client } = await fixture.newAgent();
    const mcpClient = await connect();
    const tools = await governMcpTools(client, mcpClient, { serverId: MCP_SERVER_ID });
    expect(Object.keys(tools).sort()).toEqual(
      (await mcpClient.listTools()).tools.map((t) => t.name).sort(),
    );
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 1, text: 1, reasoning: undefined },
    };
    const model: MockLanguageModelV3 = new MockLanguageModelV3({
      doGenerate: async () =>
        model.doGenerateCalls.length === 1
          ? {
              content: [
                { type: 'tool-call', toolCallId: 'c1', toolName: 'echo', input: '{"text":"hi"}' },
                {
                  type: 'tool-call',
                  toolCallId: 'c2',
                  toolName: 'export_customers',
                  input: '{}',
                },
              ],
              finishReason: { unified: 'tool-calls', raw: undefined },
              usage,
              warnings: [],
            }
          : {
              content: [{ type: 'text', text: 'echoed; export refused' }],
              finishReason: { unified: 'stop', raw: undefined },
              usage,
              warnings: [],
            },
    });
    const echoes = calls('echo');
    const result = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(3) });
    expect(result.text).toBe('echoed; export refused');
    expect(calls('echo')).toBe(echoes + 1);
    expect(calls('export_customers')).toBe(0);
    const [step] = result.steps;
    expect(step!.toolResults.map((r) => r.toolName)).toEqual(['echo']);
    expect(step!.content.find((p) => p.type === 'tool-error')).toMatchObject({
      toolName: 'export_customers',
      error: { reasonCode: 'NPL_POLICY_BLOCK' },
    });
  });
});
