// The AI SDK adapter in a real generateText tool loop (ai 6, stopWhen), driven by the SDK's own
// MockLanguageModelV3 scripted step by step, against a real gateway: an allowed call runs the
// tool; a denied call reaches the model as the tool's error-text with the reasonCode and the loop
// goes on to a final answer; a held call runs once a test approver approves it over GraphQL; a
// kill makes generateText reject with AgentRevoked before another model step.
import type {
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { generateText, simulateReadableStream, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { governTools } from '../../../client/src/adapters/ai-sdk.js';
import { AgentRevoked, GatewayDenied } from '../../../client/src/index.js';
import { type AdapterFixture, startAdapterFixture } from './fixture.js';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

function toolCalls(...calls: [string, Record<string, unknown>][]): LanguageModelV3GenerateResult {
  return {
    content: calls.map(([toolName, input], i) => ({
      type: 'tool-call' as const,
      toolCallId: `call-${toolName}-${i}`,
      toolName,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

function answer(text: string): LanguageModelV3GenerateResult {
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage,
    warnings: [],
  };
}

/** A model that plays `steps` in order, one per generateText step. */
function scriptedModel(...steps: LanguageModelV3GenerateResult[]) {
  const model: MockLanguageModelV3 = new MockLanguageModelV3({
    doGenerate: async () => {
      const step = steps[model.doGenerateCalls.length - 1];
      if (step === undefined) throw new Error('the model was called more often than scripted');
      return step;
    },
  });
  return model;
}

/** The same steps as a stream, for streamText. */
function streamedModel(...steps: LanguageModelV3GenerateResult[]) {
  const model: MockLanguageModelV3 = new MockLanguageModelV3({
    doStream: async () => {
      const step = steps[model.doStreamCalls.length - 1];
      if (step === undefined) throw new Error('the model was called more often than scripted');
      const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      for (const part of step.content) {
        if (part.type === 'text') {
          parts.push({ type: 'text-start', id: 't' });
          parts.push({ type: 'text-delta', id: 't', delta: part.text });
          parts.push({ type: 'text-end', id: 't' });
        } else if (part.type === 'tool-call') parts.push(part);
      }
      parts.push({ type: 'finish', finishReason: step.finishReason, usage: step.usage });
      return {
        stream: simulateReadableStream({
          chunks: parts,
          initialDelayInMs: null,
          chunkDelayInMs: null,
        }),
      };
    },
  });
  return model;
}

/** The tool results the model was given in the prompt of its step `index`. */
function toolResultsSeen(prompt: LanguageModelV3Prompt) {
  return prompt
    .filter((message) => message.role === 'tool')
    .flatMap((message) => message.content)
    .filter((part) => part.type === 'tool-result');
}

describe('ai-sdk adapter: governTools in a generateText loop', () => {
  let fixture: AdapterFixture;
  const ran: string[] = [];

  const developerTools = () => ({
    lookup: tool({
      description: 'Looks a customer up.',
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        ran.push(`lookup:${query}`);
        return { customer: query, balance: 120 };
      },
    }),
    export_customers: tool({
      description: 'Exports every customer.',
      inputSchema: z.object({ format: z.string() }),
      execute: async ({ format }) => {
        ran.push(`export_customers:${format}`);
        return 'exported';
      },
    }),
    wire_transfer: tool({
      description: 'Sends money.',
      inputSchema: z.object({ to: z.string(), amount: z.number() }),
      execute: async ({ to, amount }) => {
        ran.push(`wire_transfer:${to}:${amount}`);
        return `sent ${amount} to ${to}`;
      },
    }),
  });

  beforeAll(async () => {
    fixture = await startAdapterFixture();
  });
  afterAll(() => fixture?.close());

  it('keeps each tool as the developer wrote it: description, schema, other fields', async () => {
    const { client } = await fixture.newAgent();
    const tools = developerTools();
    const governed = governTools(client, tools);
    expect(Object.keys(governed)).toEqual(Object.keys(tools));
    expect(governed.lookup.description).toBe(tools.lookup.description);
    expect(governed.lookup.inputSchema).toBe(tools.lookup.inputSchema);
    expect(governed.lookup.execute).not.toBe(tools.lookup.execute);
  });

  it('runs an allowed call, shows a denied one to the model as a tool error, and the loop answers', async () => {
    const { client } = await fixture.newAgent();
    ran.length = 0;
    const model = scriptedModel(
      toolCalls(['lookup', { query: 'acme' }], ['export_customers', { format: 'csv' }]),
      answer('acme has 120; I may not export customers.'),
    );
    const result = await generateText({
      model,
      tools: governTools(client, developerTools()),
      prompt: 'Check acme, then export all customers.',
      stopWhen: stepCountIs(5),
    });
    expect(ran).toEqual(['lookup:acme']);
    expect(result.text).toBe('acme has 120; I may not export customers.');
    expect(result.steps).toHaveLength(2);
    const denied = result.steps[0]!.content.find((part) => part.type === 'tool-error');
    expect(denied?.toolName).toBe('export_customers');
    const error = (denied as { error: unknown }).error;
    expect(error).toBeInstanceOf(GatewayDenied);
    expect(error).toMatchObject({ reasonCode: 'NPL_POLICY_BLOCK', ruleId: 'block_export' });
    // What the model read in its second step.
    const seen = toolResultsSeen(model.doGenerateCalls[1]!.prompt);
    expect(seen.find((part) => part.toolName === 'lookup')?.output).toEqual({
      type: 'json',
      value: { customer: 'acme', balance: 120 },
    });
    const deniedOutput = seen.find((part) => part.toolName === 'export_customers')?.output;
    expect(deniedOutput).toMatchObject({ type: 'error-text' });
    expect((deniedOutput as { value: string }).value).toContain('NPL_POLICY_BLOCK');
  });

  it('holds a large transfer until a test approver approves it over GraphQL, then runs it once', async () => {
    const { client, agentId } = await fixture.newAgent();
    ran.length = 0;
    const approver = await fixture.approver(agentId);
    const model = scriptedModel(
      toolCalls(['wire_transfer', { to: 'acme', amount: 50_000 }]),
      answer('Transfer done.'),
    );
    const result = await generateText({
      model,
      tools: governTools(client, developerTools()),
      prompt: 'Pay acme 50 000.',
      stopWhen: stepCountIs(5),
    });
    expect(await approver.approved).toEqual(expect.any(String));
    expect(ran).toEqual(['wire_transfer:acme:50000']);
    expect(result.text).toBe('Transfer done.');
    expect(toolResultsSeen(model.doGenerateCalls[1]!.prompt)[0]?.output).toEqual({
      type: 'text',
      value: 'sent 50000 to acme',
    });
  });

  it('stops the run when the agent is killed: generateText rejects with AgentRevoked', async () => {
    const { client, publicKey } = await fixture.newAgent();
    ran.length = 0;
    const tools = developerTools();
    // The operator kills the agent while its first tool runs.
    const killingLookup = tool({
      description: 'Looks a customer up.',
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        ran.push(`lookup:${query}`);
        await fixture.kill(publicKey);
        return { customer: query };
      },
    });
    const model = scriptedModel(
      toolCalls(['lookup', { query: 'acme' }]),
      toolCalls(['wire_transfer', { to: 'acme', amount: 5 }]),
      answer('never reached'),
    );
    const run = generateText({
      model,
      tools: governTools(client, { ...tools, lookup: killingLookup }),
      prompt: 'Check acme, then pay it 5.',
      stopWhen: stepCountIs(5),
    });
    await expect(run).rejects.toBeInstanceOf(AgentRevoked);
    expect(ran).toEqual(['lookup:acme']);
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(client.revoked).toBe(true);
  });

  it('stops a streamText run too: its result rejects with AgentRevoked, no further step', async () => {
    const { client, publicKey } = await fixture.newAgent();
    ran.length = 0;
    await fixture.kill(publicKey);
    const model = streamedModel(toolCalls(['lookup', { query: 'acme' }]), answer('never reached'));
    const result = streamText({
      model,
      tools: governTools(client, developerTools()),
      prompt: 'Check acme.',
      stopWhen: stepCountIs(5),
    });
    await expect(result.text).rejects.toBeInstanceOf(AgentRevoked);
    expect(ran).toEqual([]);
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it("streams an allowed generator tool's preliminary results; a denied one never starts", async () => {
    const { client } = await fixture.newAgent();
    ran.length = 0;
    const progress = (name: string) =>
      tool({
        description: `Runs ${name} in stages.`,
        inputSchema: z.object({ format: z.string() }),
        execute: async function* ({ format }) {
          ran.push(`${name}:${format}`);
          yield { stage: 'started' };
          yield { stage: 'done', format };
        },
      });
    const model = scriptedModel(
      toolCalls(['report', { format: 'csv' }], ['export_customers', { format: 'csv' }]),
      answer('report ready'),
    );
    const result = await generateText({
      model,
      tools: governTools(client, {
        report: progress('report'),
        export_customers: progress('export'),
      }),
      prompt: 'Report, then export.',
      stopWhen: stepCountIs(5),
    });
    expect(ran).toEqual(['report:csv']);
    expect(result.steps[0]!.toolResults.map((r) => [r.toolName, r.output])).toEqual([
      ['report', { stage: 'done', format: 'csv' }],
    ]);
    const seen = toolResultsSeen(model.doGenerateCalls[1]!.prompt);
    expect(seen.find((p) => p.toolName === 'export_customers')?.output).toEqual({
      type: 'error-text',
      value: expect.stringContaining('NPL_POLICY_BLOCK'),
    });
  });
});
