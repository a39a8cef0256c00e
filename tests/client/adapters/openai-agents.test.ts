// The OpenAI Agents SDK adapter in a real agent run (@openai/agents 0.14: Agent + run(), the
// SDK's own turn loop and tool execution), driven by a scripted implementation of the SDK's
// Model interface, against a real gateway: an allowed call runs the tool; a denied call reaches
// the model as the tool's output text with the reasonCode and the run goes on to a final output;
// a held call runs once a test approver approves it over GraphQL; a kill makes run() reject
// (a ToolCallError carrying the AgentRevoked) before another turn.
import {
  Agent,
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  setTracingDisabled,
  ToolCallError,
  tool,
  Usage,
} from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { governTools } from '../../../client/src/adapters/openai-agents.js';
import { AgentRevoked } from '../../../client/src/index.js';
import { type AdapterFixture, startAdapterFixture } from './fixture.js';

setTracingDisabled(true);

/** The SDK's Model interface, answering scripted output items turn by turn. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  readonly #script: AgentOutputItem[][];

  constructor(...script: AgentOutputItem[][]) {
    this.#script = script;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const output = this.#script[this.requests.length - 1];
    if (output === undefined) throw new Error('the model was called more often than scripted');
    return { usage: new Usage(), output, responseId: `response-${this.requests.length}` };
  }

  // biome-ignore lint/correctness/useYield: run() never streams in these tests
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed');
  }
}

const calls = (...list: [string, Record<string, unknown>][]): AgentOutputItem[] =>
  list.map(([name, args], i) => ({
    type: 'function_call',
    callId: `call-${name}-${i}`,
    name,
    arguments: JSON.stringify(args),
    status: 'completed',
  }));

const say = (text: string): AgentOutputItem[] => [
  {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text }],
  },
];

/** The function call results the model was given in `request`. */
function resultsSeen(request: ModelRequest): Map<string, unknown> {
  const items = typeof request.input === 'string' ? [] : request.input;
  const seen = new Map<string, unknown>();
  for (const item of items) {
    if (item.type === 'function_call_result') seen.set(item.name, item.output);
  }
  return seen;
}

describe('openai-agents adapter: governTools in an Agent run', () => {
  let fixture: AdapterFixture;
  const ran: string[] = [];

  const developerTools = () => [
    tool({
      name: 'lookup',
      description: 'Looks a customer up.',
      parameters: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        ran.push(`lookup:${query}`);
        return `customer ${query}, balance 120`;
      },
    }),
    tool({
      name: 'export_customers',
      description: 'Exports every customer.',
      parameters: z.object({ format: z.string() }),
      execute: async ({ format }) => {
        ran.push(`export_customers:${format}`);
        return 'exported';
      },
    }),
    tool({
      name: 'wire_transfer',
      description: 'Sends money.',
      parameters: z.object({ to: z.string(), amount: z.number() }),
      execute: async ({ to, amount }) => {
        ran.push(`wire_transfer:${to}:${amount}`);
        return `sent ${amount} to ${to}`;
      },
    }),
  ];

  const agent = (model: Model, tools: ReturnType<typeof developerTools>) =>
    new Agent({ name: 'clerk', instructions: 'Help the customer.', model, tools });

  beforeAll(async () => {
    fixture = await startAdapterFixture();
  });
  afterAll(() => fixture?.close());

  it('keeps each tool as the developer wrote it: name, description, JSON schema, policies', async () => {
    const { client } = await fixture.newAgent();
    const tools = developerTools();
    const governed = governTools(client, tools);
    governed.forEach((governedTool, i) => {
      const original = tools[i]!;
      expect({ ...governedTool, invoke: undefined }).toEqual({ ...original, invoke: undefined });
      expect(governedTool.parameters).toBe(original.parameters);
      expect(governedTool.invoke).not.toBe(original.invoke);
    });
  });

  it('runs an allowed call, answers a denied one as tool output text, and the run finishes', async () => {
    const { client } = await fixture.newAgent();
    ran.length = 0;
    const model = new ScriptedModel(
      calls(['lookup', { query: 'acme' }], ['export_customers', { format: 'csv' }]),
      say('acme has 120; I may not export customers.'),
    );
    const result = await run(agent(model, governTools(client, developerTools())), 'Check acme.');
    expect(result.finalOutput).toBe('acme has 120; I may not export customers.');
    expect(ran).toEqual(['lookup:acme']);
    const seen = resultsSeen(model.requests[1]!);
    expect(seen.get('lookup')).toMatchObject({ text: 'customer acme, balance 120' });
    const denied = seen.get('export_customers') as { type: string; text: string };
    expect(denied.type).toBe('text');
    expect(denied.text).toContain('NPL_POLICY_BLOCK');
    expect(denied.text).toContain('block_export');
  });

  it('holds a large transfer until a test approver approves it over GraphQL, then runs it once', async () => {
    const { client, agentId } = await fixture.newAgent();
    ran.length = 0;
    const approver = await fixture.approver(agentId);
    const model = new ScriptedModel(
      calls(['wire_transfer', { to: 'acme', amount: 50_000 }]),
      say('Transfer done.'),
    );
    const result = await run(agent(model, governTools(client, developerTools())), 'Pay acme.');
    expect(await approver.approved).toEqual(expect.any(String));
    expect(ran).toEqual(['wire_transfer:acme:50000']);
    expect(result.finalOutput).toBe('Transfer done.');
    expect(resultsSeen(model.requests[1]!).get('wire_transfer')).toMatchObject({
      text: 'sent 50000 to acme',
    });
  });

  it('answers a held call the approver rejects as tool output text, and the run finishes', async () => {
    const { client, agentId } = await fixture.newAgent();
    ran.length = 0;
    const approver = await fixture.approver(agentId, 'reject');
    const model = new ScriptedModel(
      calls(['wire_transfer', { to: 'acme', amount: 50_000 }]),
      say('The transfer was refused.'),
    );
    const result = await run(agent(model, governTools(client, developerTools())), 'Pay acme.');
    await approver.approved;
    expect(ran).toEqual([]);
    expect(result.finalOutput).toBe('The transfer was refused.');
    expect(resultsSeen(model.requests[1]!).get('wire_transfer')).toMatchObject({
      type: 'text',
      text: expect.stringContaining('APPROVAL_REJECTED'),
    });
  });

  it('stops the run when the agent is killed: run() rejects with the AgentRevoked', async () => {
    const { client, publicKey } = await fixture.newAgent();
    ran.length = 0;
    const [, exportTool, wireTransfer] = developerTools();
    // The operator kills the agent while its first tool runs.
    const killingLookup = tool({
      name: 'lookup',
      description: 'Looks a customer up.',
      parameters: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        ran.push(`lookup:${query}`);
        await fixture.kill(publicKey);
        return 'acme';
      },
    });
    const model = new ScriptedModel(
      calls(['lookup', { query: 'acme' }]),
      calls(['wire_transfer', { to: 'acme', amount: 5 }]),
      say('never reached'),
    );
    const governed = governTools(client, [killingLookup, exportTool!, wireTransfer!]);
    const failure = await run(agent(model, governed), 'Check acme, then pay it 5.').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ToolCallError);
    expect((failure as ToolCallError).error).toBeInstanceOf(AgentRevoked);
    expect(ran).toEqual(['lookup:acme']);
    expect(model.requests).toHaveLength(2);
  });
});
