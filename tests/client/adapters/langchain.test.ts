// The LangChain adapter in a real tool-calling agent loop of @langchain/core 1.x (bindTools →
// invoke → tool.invoke(toolCall) → ToolMessage, until the model answers), driven by the core's
// own fake chat model (FakeListChatModel from @langchain/core/utils/testing, scripted with tool
// calls), against a real gateway: an allowed call runs the tool; a denied call reaches the model
// as a ToolMessage with status 'error' and the reasonCode and the loop goes on to an answer; a
// held call runs once a test approver approves it over GraphQL; a kill throws AgentRevoked out of
// the loop.
import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { DynamicStructuredTool, type StructuredToolInterface, tool } from '@langchain/core/tools';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { governTools } from '../../../client/src/adapters/langchain.js';
import { AgentRevoked, GatewayDenied } from '../../../client/src/index.js';
import { type AdapterFixture, startAdapterFixture } from './fixture.js';

/** The core's fake chat model, answering a scripted AIMessage (tool calls or text) per turn. */
class ScriptedChatModel extends FakeListChatModel {
  readonly received: BaseMessage[][] = [];
  readonly #script: AIMessage[];

  constructor(...script: AIMessage[]) {
    super({ responses: [] });
    this.#script = script;
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.received.push([...messages]);
    const message = this.#script[this.received.length - 1];
    if (message === undefined) throw new Error('the model was called more often than scripted');
    return {
      generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }],
    };
  }

  override bindTools(_tools: Parameters<FakeListChatModel['bindTools']>[0]) {
    return this.withConfig({}) as unknown as ReturnType<FakeListChatModel['bindTools']>;
  }
}

const calls = (...list: [string, Record<string, unknown>][]) =>
  new AIMessage({
    content: '',
    tool_calls: list.map(([name, args], i) => ({
      name,
      args,
      id: `call-${name}-${i}`,
      type: 'tool_call',
    })),
  });

/** The tool-calling loop of LangChain's docs: the model decides, each tool call answers a ToolMessage. */
async function runAgent(
  model: ScriptedChatModel,
  tools: StructuredToolInterface[],
  input: string,
): Promise<{ answer: string; messages: BaseMessage[] }> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const bound = model.bindTools(tools);
  const messages: BaseMessage[] = [new HumanMessage(input)];
  for (let turn = 0; turn < 5; turn++) {
    const reply = await bound.invoke(messages);
    messages.push(reply);
    if (!reply.tool_calls?.length) return { answer: String(reply.content), messages };
    for (const call of reply.tool_calls) {
      messages.push((await byName.get(call.name)!.invoke(call)) as ToolMessage);
    }
  }
  throw new Error('no answer within 5 turns');
}

describe('langchain adapter: governTools in a tool-calling agent loop', () => {
  let fixture: AdapterFixture;
  const ran: string[] = [];

  const developerTools = () => [
    tool(
      async ({ query }) => {
        ran.push(`lookup:${query}`);
        return JSON.stringify({ customer: query, balance: 120 });
      },
      {
        name: 'lookup',
        description: 'Looks a customer up.',
        schema: z.object({ query: z.string() }),
      },
    ),
    tool(
      async ({ format }) => {
        ran.push(`export_customers:${format}`);
        return 'exported';
      },
      {
        name: 'export_customers',
        description: 'Exports every customer.',
        schema: z.object({ format: z.string() }),
      },
    ),
    tool(
      async ({ to, amount }) => {
        ran.push(`wire_transfer:${to}:${amount}`);
        return `sent ${amount} to ${to}`;
      },
      {
        name: 'wire_transfer',
        description: 'Sends money.',
        schema: z.object({ to: z.string(), amount: z.number() }),
      },
    ),
  ];

  beforeAll(async () => {
    fixture = await startAdapterFixture();
  });
  afterAll(() => fixture?.close());

  it('keeps each tool as the developer wrote it: class, name, description, schema', async () => {
    const { client } = await fixture.newAgent();
    const tools = developerTools();
    const governed = governTools(client, tools);
    governed.forEach((governedTool, i) => {
      const original = tools[i]!;
      expect(governedTool).toBeInstanceOf(DynamicStructuredTool);
      expect(governedTool.name).toBe(original.name);
      expect(governedTool.description).toBe(original.description);
      expect(governedTool.schema).toBe(original.schema);
    });
  });

  it('runs an allowed call, answers a denied one with an error ToolMessage, and the loop answers', async () => {
    const { client } = await fixture.newAgent();
    ran.length = 0;
    const model = new ScriptedChatModel(
      calls(['lookup', { query: 'acme' }], ['export_customers', { format: 'csv' }]),
      new AIMessage('acme has 120; I may not export customers.'),
    );
    const { answer } = await runAgent(
      model,
      governTools(client, developerTools()),
      'Check acme, export all.',
    );
    expect(answer).toBe('acme has 120; I may not export customers.');
    expect(ran).toEqual(['lookup:acme']);
    // What the model read on its second turn.
    const seen = model.received[1]!.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
    expect(seen.map((m) => [m.name, m.status, m.tool_call_id])).toEqual([
      ['lookup', 'success', 'call-lookup-0'],
      ['export_customers', 'error', 'call-export_customers-1'],
    ]);
    expect(seen[1]!.content).toContain('NPL_POLICY_BLOCK');
    expect(seen[1]!.additional_kwargs.agentGateway).toMatchObject({
      reasonCode: 'NPL_POLICY_BLOCK',
      ruleId: 'block_export',
    });
  });

  it('answers a denied content_and_artifact tool with the same error ToolMessage', async () => {
    const { client } = await fixture.newAgent();
    const exportWithArtifact = tool(async () => ['exported', { rows: 3 }], {
      name: 'export_customers',
      description: 'Exports every customer.',
      schema: z.object({ format: z.string() }),
      responseFormat: 'content_and_artifact',
    });
    const [governed] = governTools(client, [exportWithArtifact]);
    const message = await (governed as DynamicStructuredTool).invoke({
      name: 'export_customers',
      args: { format: 'csv' },
      id: 'call-1',
      type: 'tool_call',
    });
    expect(message).toBeInstanceOf(ToolMessage);
    expect(message).toMatchObject({
      status: 'error',
      tool_call_id: 'call-1',
      content: expect.stringContaining('NPL_POLICY_BLOCK'),
    });
  });

  it('throws GatewayDenied when a denied tool is invoked with plain arguments', async () => {
    const { client } = await fixture.newAgent();
    const exportTool = governTools(client, developerTools())[1] as DynamicStructuredTool;
    await expect(exportTool.invoke({ format: 'csv' })).rejects.toMatchObject({
      constructor: GatewayDenied,
      reasonCode: 'NPL_POLICY_BLOCK',
    });
  });

  it('holds a large transfer until a test approver approves it over GraphQL, then runs it once', async () => {
    const { client, agentId } = await fixture.newAgent();
    ran.length = 0;
    const approver = await fixture.approver(agentId);
    const model = new ScriptedChatModel(
      calls(['wire_transfer', { to: 'acme', amount: 50_000 }]),
      new AIMessage('Transfer done.'),
    );
    const { answer, messages } = await runAgent(
      model,
      governTools(client, developerTools()),
      'Pay acme 50 000.',
    );
    expect(await approver.approved).toEqual(expect.any(String));
    expect(ran).toEqual(['wire_transfer:acme:50000']);
    expect(answer).toBe('Transfer done.');
    expect(messages[2]).toMatchObject({ status: 'success', content: 'sent 50000 to acme' });
  });

  it('answers a held call the approver rejects with an error ToolMessage, and the loop answers', async () => {
    const { client, agentId } = await fixture.newAgent();
    ran.length = 0;
    const approver = await fixture.approver(agentId, 'reject');
    const model = new ScriptedChatModel(
      calls(['wire_transfer', { to: 'acme', amount: 50_000 }]),
      new AIMessage('The transfer was refused.'),
    );
    const { answer, messages } = await runAgent(
      model,
      governTools(client, developerTools()),
      'Pay acme 50 000.',
    );
    const approvalId = await approver.approved;
    expect(ran).toEqual([]);
    expect(answer).toBe('The transfer was refused.');
    expect(messages[2]).toMatchObject({
      status: 'error',
      content: expect.stringContaining('APPROVAL_REJECTED'),
      additional_kwargs: { agentGateway: { reasonCode: 'APPROVAL_REJECTED', approvalId } },
    });
  });

  it('stops the run when the agent is killed: AgentRevoked leaves the loop', async () => {
    const { client, publicKey } = await fixture.newAgent();
    ran.length = 0;
    const [, exportTool, wireTransfer] = developerTools();
    // The operator kills the agent while its first tool runs.
    const killingLookup = tool(
      async ({ query }) => {
        ran.push(`lookup:${query}`);
        await fixture.kill(publicKey);
        return 'acme';
      },
      {
        name: 'lookup',
        description: 'Looks a customer up.',
        schema: z.object({ query: z.string() }),
      },
    );
    const model = new ScriptedChatModel(
      calls(['lookup', { query: 'acme' }]),
      calls(['wire_transfer', { to: 'acme', amount: 5 }]),
      new AIMessage('never reached'),
    );
    const governed = governTools(client, [killingLookup, exportTool!, wireTransfer!]);
    await expect(runAgent(model, governed, 'Check acme, then pay it 5.')).rejects.toBeInstanceOf(
      AgentRevoked,
    );
    expect(ran).toEqual(['lookup:acme']);
    expect(model.received).toHaveLength(2);
  });
});
