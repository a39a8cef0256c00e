// Agent Gateway for an MCP client (`@modelcontextprotocol/sdk` 1.x): governMcpClient(client,
// mcpClient, { serverId }) answers `listTools` and `callTool` like the MCP client it wraps, with
// every tool call governed by the gateway client.
//
// The gateway decides, the agent's own MCP client calls: `callTool` inspects with
// `forward: false` and, once allowed, calls `mcpClient.callTool` itself. Not `forward: true`
// (the gateway calling the upstream registered under serverId and answering its result) because
// the agent already holds a connection to this server: its session, transport, authorization,
// progress notifications and cancellation stay the agent's, the server needs no route from the
// gateway (a stdio server has none), and the call reaches the server exactly once, from the
// process the developer configured. An upstream only the gateway may call (oauthMode mcp_as)
// is reached through the gateway's forward or MCP proxy instead, not through this adapter.
//
// How each outcome looks to the MCP client's caller:
// - deny (or a held call whose approval was rejected, expired or timed out): a tool result with
//   `isError: true` and a text naming the reasonCode — how MCP reports a tool that failed, so the
//   model reads it and can recover — plus `_meta['agent-gateway/denial']` with the identifiers.
// - the gateway unreachable or any other failure: thrown, as the MCP client's own failures are.
// - AgentRevoked: thrown out of `callTool`, as a failed request is, so the host's run stops.
// With `onlyAllowedTools`, listTools hides the tools the agent's identity (allowedTools: exact
// names and `*` globs, read from GET /api/v1/agents/{id}/identity) never allows: only what step 3
// of the gateway's pipeline always denies. Every call is still inspected and may be denied.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolRequest, CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayClient } from '../core.js';
import { describeRefusal, isRefusal, refusalDetails } from './denial.js';

export interface GovernMcpClientOptions {
  /** The id the MCP server is registered under in the gateway. */
  readonly serverId: string;
  /** listTools hides the tools the agent's allowedTools never allows. Default false. */
  readonly onlyAllowedTools?: boolean;
}

/** The `_meta` key of a denied call's result. */
export const DENIAL_META_KEY = 'agent-gateway/denial';

export interface GovernedMcpClient {
  /** The server's tools (with onlyAllowedTools: those the agent may call). */
  listTools(...args: Parameters<Client['listTools']>): ReturnType<Client['listTools']>;
  /** Inspect, then call through the MCP client; a denial is an `isError` result. */
  callTool(
    params: CallToolRequest['params'],
    resultSchema?: Parameters<Client['callTool']>[1],
    options?: RequestOptions,
  ): Promise<CallToolResult>;
}

export function governMcpClient(
  client: GatewayClient,
  mcpClient: Client,
  options: GovernMcpClientOptions,
): GovernedMcpClient {
  const { serverId } = options;
  return {
    async listTools(params, requestOptions) {
      const listed = await mcpClient.listTools(params, requestOptions);
      if (!options.onlyAllowedTools) return listed;
      const identity = await client.identity(
        requestOptions?.signal ? { signal: requestOptions.signal } : {},
      );
      const allowed = compileAllowList(identity.allowedTools);
      return { ...listed, tools: listed.tools.filter((tool) => allowed(tool.name)) };
    },
    async callTool(params, resultSchema, requestOptions) {
      const name = params.name;
      const signal = requestOptions?.signal;
      try {
        return (await client.governTool(
          { name, serverId },
          () => mcpClient.callTool(params, resultSchema, requestOptions) as Promise<CallToolResult>,
        )(params.arguments ?? {}, signal ? { signal } : {})) as CallToolResult;
      } catch (error) {
        if (!isRefusal(error)) throw error;
        return {
          isError: true,
          content: [{ type: 'text', text: describeRefusal(name, error) }],
          _meta: { [DENIAL_META_KEY]: refusalDetails(error) },
        };
      }
    },
  };
}

/** The gateway's allow-list semantics (shared/tools/name-globs.ts): exact names, `*` globs. */
function compileAllowList(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.includes('*')) return () => true;
  const exact = new Set(patterns.filter((pattern) => !pattern.includes('*')));
  const globs = patterns
    .filter((pattern) => pattern.includes('*'))
    .map((glob) => glob.split('*').map(escapeRegExp).join('[^]*'));
  const regex = globs.length === 0 ? undefined : new RegExp(`^(?:${globs.join('|')})$`, 'u');
  return (name) => exact.has(name) || (regex?.test(name) ?? false);
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.|?*+()[\]{}/-]/g, '\\$&');
}
