// Agent Gateway for LangChain.js (`@langchain/core` 1.x): governTools(client, tools) returns the
// same tools with every call governed by the client. Each governed tool is an object whose
// prototype is the developer's tool: name, description, schema, responseFormat, returnDirect,
// metadata and `instanceof` are the original's; only `_call` — the step `invoke` and `call` both
// reach after the schema has parsed the arguments — is replaced, so the gateway inspects exactly
// the arguments the tool will run with.
//
// How each outcome looks to LangChain:
// - deny (or a held call whose approval was rejected, expired or timed out), invoked with a
//   ToolCall (the agent loop: `await tool.invoke(aiMessage.tool_calls[i])`):
//   the tool answers a ToolMessage with `status: 'error'`, the call's id and a text naming the
//   reasonCode: the message the loop appends for the model, as LangGraph's ToolNode does for a
//   failing tool, so the loop goes on and the model can recover.
// - the same, invoked with plain arguments: the error is thrown (a failing LangChain tool throws).
// - AgentRevoked: thrown out of `invoke`, so it leaves the developer's loop and stops the run.
//   (LangGraph's ToolNode turns thrown errors into ToolMessages unless `handleToolErrors: false`;
//   denials are already ToolMessages, so set it to false and a kill stops the graph.)
import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager';
import { ToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface, ToolRunnableConfig } from '@langchain/core/tools';
import type { GatewayClient } from '../core.js';
import { describeRefusal, isRefusal, refusalDetails } from './denial.js';

export interface GovernToolsOptions {
  /** The MCP server id every tool of this set is inspected under (default: the client's). */
  readonly serverId?: string;
}

type ToolCallFunction = (
  this: StructuredToolInterface,
  arg: unknown,
  runManager?: CallbackManagerForToolRun,
  parentConfig?: ToolRunnableConfig,
) => Promise<unknown>;

/** The same tools, each call governed by `client`. */
export function governTools<T extends StructuredToolInterface>(
  client: GatewayClient,
  tools: readonly T[],
  options: GovernToolsOptions = {},
): T[] {
  return tools.map((tool) => governLangChainTool(client, tool, options.serverId));
}

function governLangChainTool<T extends StructuredToolInterface>(
  client: GatewayClient,
  tool: T,
  serverId: string | undefined,
): T {
  const call = (tool as unknown as { _call?: ToolCallFunction })._call;
  if (typeof call !== 'function') {
    throw new TypeError(
      `governTools: ${tool.name} is not a LangChain StructuredTool (tool(), DynamicStructuredTool or a subclass)`,
    );
  }
  const name = tool.name;
  const definition = serverId === undefined ? { name } : { name, serverId };
  const governed = Object.create(tool) as T;
  Object.defineProperty(governed, '_call', {
    configurable: true,
    writable: true,
    value: async function (
      this: T,
      arg: unknown,
      runManager?: CallbackManagerForToolRun,
      parentConfig?: ToolRunnableConfig,
    ): Promise<unknown> {
      const signal = parentConfig?.signal;
      try {
        return await client.governTool(definition, () =>
          call.call(this, arg, runManager, parentConfig),
        )(asArguments(arg), signal ? { signal } : {});
      } catch (error) {
        const toolCallId = parentConfig?.toolCall?.id;
        if (!isRefusal(error) || toolCallId === undefined) throw error;
        const message = new ToolMessage({
          status: 'error',
          content: describeRefusal(name, error),
          tool_call_id: toolCallId,
          name,
          additional_kwargs: { agentGateway: refusalDetails(error) },
        });
        // A ToolMessage is a direct tool output: LangChain passes it through as the answer.
        return (this as { responseFormat?: string }).responseFormat === 'content_and_artifact'
          ? [message, undefined]
          : message;
      }
    },
  });
  return governed;
}

/** Parsed tool inputs are objects; a string tool's input is sent as `{ input }`. */
function asArguments(arg: unknown): Record<string, unknown> {
  return typeof arg === 'object' && arg !== null && !Array.isArray(arg)
    ? (arg as Record<string, unknown>)
    : { input: arg };
}
