// Agent Gateway for the Vercel AI SDK (`ai` 6): governTools(client, tools) returns the same tool
// set with every `execute` governed by the client (inspect → run, deny, or wait for approval).
// Names, descriptions, schemas and every other field are the developer's own, untouched.
//
// How each outcome looks to the AI SDK:
// - deny: `execute` throws a GatewayDenied whose message names the reasonCode. ai 6 turns a thrown
//   `execute` into a `tool-error` part; the model reads its message as the tool's `error-text`
//   result and the loop (stopWhen) goes on, so the model can recover. A held call whose approval
//   was rejected, expired or timed out fails the same way (ApprovalRejected, … as the error).
// - AgentRevoked: ai 6 catches everything `execute` throws, so a thrown AgentRevoked would only be
//   another tool error and the loop would call the model again. Instead `execute` returns a
//   marker and the tool's `toModelOutput` — which ai awaits in the step loop before the next
//   model call, outside any catch — throws the AgentRevoked: generateText (and streamText's
//   result) rejects with it and no further step runs.
// governMcpTools(client, mcpClient, { serverId }) offers an MCP server's tools (listed through
// the agent's own MCP SDK client, called through it) as such governed AI SDK tools.
// Tools without `execute` (answered by the caller) and provider-executed tools run nowhere in this
// process: they are returned unchanged and the gateway never sees their calls.
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { dynamicTool, jsonSchema, type Tool, type ToolExecutionOptions, type ToolSet } from 'ai';
import type { GatewayClient } from '../core.js';
import { AgentRevoked, GatewayDenied } from '../errors.js';
import { describeDenial } from './denial.js';

export interface GovernToolsOptions {
  /** The MCP server id every tool of this set is inspected under (default: the client's). */
  readonly serverId?: string;
}

/** What `execute` answers for a revoked agent; `toModelOutput` turns it back into the throw. */
class RevokedOutput {
  constructor(readonly error: AgentRevoked) {}
}

/** The same tools, each call governed by `client`. */
export function governTools<TOOLS extends ToolSet>(
  client: GatewayClient,
  tools: TOOLS,
  options: GovernToolsOptions = {},
): TOOLS {
  const governed: Record<string, Tool> = {};
  for (const [name, tool] of Object.entries(tools)) {
    governed[name] = governAiTool(client, name, tool, options.serverId);
  }
  return governed as TOOLS;
}

/**
 * The tools of an MCP server, listed and called through the agent's MCP SDK client, as governed
 * AI SDK tools (dynamic tools: the server's JSON schemas, its descriptions). An MCP result is the
 * tool's output as the server sent it (`isError` results included).
 */
export async function governMcpTools(
  client: GatewayClient,
  mcpClient: McpClient,
  options: { readonly serverId: string },
): Promise<ToolSet> {
  const tools: ToolSet = {};
  let cursor: string | undefined;
  do {
    const page = await mcpClient.listTools(cursor === undefined ? undefined : { cursor });
    for (const mcpTool of page.tools) {
      const name = mcpTool.name;
      tools[name] = dynamicTool({
        description: mcpTool.description ?? '',
        ...(mcpTool.title === undefined ? {} : { title: mcpTool.title }),
        inputSchema: jsonSchema(mcpTool.inputSchema as Parameters<typeof jsonSchema>[0]),
        execute: (input, { abortSignal }) =>
          mcpClient.callTool(
            { name, arguments: input as Record<string, unknown> },
            undefined,
            abortSignal ? { signal: abortSignal } : undefined,
          ),
      });
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return governTools(client, tools, { serverId: options.serverId });
}

function governAiTool(
  client: GatewayClient,
  name: string,
  tool: Tool,
  serverId: string | undefined,
): Tool {
  const execute = tool.execute;
  if (execute === undefined || tool.type === 'provider') return tool;
  const definition = serverId === undefined ? { name } : { name, serverId };
  const streaming = isAsyncGeneratorFunction(execute);

  const run = (input: unknown, options: ToolExecutionOptions) =>
    client.governTool(definition, () => execute(input, options))(asArguments(input), {
      ...(options.abortSignal ? { signal: options.abortSignal } : {}),
    });

  const governedExecute = streaming
    ? async function* (input: unknown, options: ToolExecutionOptions) {
        const outcome = await settle(name, () => run(input, options));
        if (outcome instanceof RevokedOutput) {
          yield outcome;
          return;
        }
        // Allowed: the developer's generator streams its preliminary results as before.
        yield* outcome as AsyncIterable<unknown>;
      }
    : (input: unknown, options: ToolExecutionOptions) => settle(name, () => run(input, options));

  const toModelOutput = tool.toModelOutput;
  return {
    ...tool,
    execute: governedExecute,
    toModelOutput: async (options: { toolCallId: string; input: unknown; output: unknown }) => {
      if (options.output instanceof RevokedOutput) throw options.output.error;
      if (toModelOutput) return toModelOutput(options as never);
      const { output } = options;
      return typeof output === 'string'
        ? { type: 'text', value: output }
        : { type: 'json', value: output === undefined ? null : output };
    },
  } as Tool;
}

/** The governed call; a denial thrown with the model-facing text, a revocation as its marker. */
async function settle(name: string, call: () => Promise<unknown>): Promise<unknown> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof AgentRevoked) return new RevokedOutput(error);
    if (error instanceof GatewayDenied) {
      throw new GatewayDenied({
        reasonCode: error.reasonCode,
        ruleId: error.ruleId,
        policy: error.policy,
        auditId: error.auditId,
        inspectionId: error.inspectionId,
        message: describeDenial(name, error),
      });
    }
    throw error;
  }
}

/** Tool inputs are objects for every schema a model can fill; anything else is sent as `input`. */
function asArguments(input: unknown): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : { input };
}

function isAsyncGeneratorFunction(fn: unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncGeneratorFunction]';
}
