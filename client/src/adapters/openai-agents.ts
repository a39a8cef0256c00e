// Agent Gateway for the OpenAI Agents SDK (`@openai/agents` 0.14): governTools(client, tools)
// returns the same function tools with every call governed by the client. Each governed tool is
// a copy of the developer's FunctionTool (name, description, JSON schema, strict, approval and
// enablement policies, guardrails, timeouts, output schema) whose `invoke` inspects the call's
// arguments first and then calls the original `invoke`, which parses, runs and formats as before.
//
// How each outcome looks to the Agents SDK:
// - deny (or a held call whose approval was rejected, expired or timed out): a failing function
//   tool answers the model with text from its error function, and the run goes on. The governed
//   tool answers the same way: through the tool's own `errorFunction` when it exposes one (tools
//   with an output schema), otherwise a text naming the reasonCode. A tool whose `errorFunction`
//   is null asked for failures to end the run: its refusal is thrown.
// - the gateway unreachable (GatewayUnavailable) or any other failure of the inspection: thrown,
//   so the run fails closed (a ToolCallError) rather than the model retrying blind.
// - AgentRevoked: thrown from `invoke`; the runner fails the run with a ToolCallError whose
//   `error` is the AgentRevoked, so `run()` rejects and no further turn runs.
// A tool `timeoutMs` bounds the whole governed call, including the wait for a held call's approval.
import type { FunctionTool, RunContext } from '@openai/agents';
import type { GatewayClient } from '../core.js';
import { describeRefusal, isRefusal } from './denial.js';

export interface GovernToolsOptions {
  /** The MCP server id every tool of this set is inspected under (default: the client's). */
  readonly serverId?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: any FunctionTool, whatever its context and types
type AnyFunctionTool = FunctionTool<any, any, any>;
type ToolCallDetails = Parameters<AnyFunctionTool['invoke']>[2];

/** The same tools, each call governed by `client`. */
export function governTools<T extends AnyFunctionTool>(
  client: GatewayClient,
  tools: readonly T[],
  options: GovernToolsOptions = {},
): T[] {
  return tools.map((tool) => governFunctionTool(client, tool, options.serverId));
}

function governFunctionTool<T extends AnyFunctionTool>(
  client: GatewayClient,
  tool: T,
  serverId: string | undefined,
): T {
  if (tool.type !== 'function') {
    throw new TypeError(`governTools: ${String(tool.name)} is not a function tool`);
  }
  const { name, invoke, errorFunction } = tool;
  const definition = serverId === undefined ? { name } : { name, serverId };
  const governedInvoke = async (
    runContext: RunContext<unknown>,
    input: string,
    details?: ToolCallDetails,
  ): Promise<unknown> => {
    const signal = details?.signal;
    try {
      return await client.governTool(definition, () => invoke(runContext, input, details))(
        parseArguments(input),
        signal ? { signal } : {},
      );
    } catch (error) {
      // An aborted call (the run's signal, the tool's timeout) ends as the SDK expects an abort to.
      if (!isRefusal(error) || signal?.aborted) throw error;
      if (errorFunction === null) throw error;
      if (typeof errorFunction === 'function') return errorFunction(runContext, error, details);
      return describeRefusal(name, error);
    }
  };
  // A copy keeps every own property, symbol-keyed ones included (the output validator).
  return { ...tool, invoke: governedInvoke } as T;
}

/** The model's JSON arguments; input that is not a JSON object is sent as `{ input }`. */
function parseArguments(input: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(input);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // Not JSON: the tool's own parser refuses it after the inspection, as it would have.
  }
  return { input };
}
