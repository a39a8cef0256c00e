// Production and shadow forwarding of an allowed call to the registered upstream (Streamable
// HTTP), with a gateway-minted token under oauthMode mcp_as. An upstream failure is still an
// allow decision: the answer carries the failure's code, the registry's status for it, and a
// JSON-RPC error the agent's MCP client understands. The tools of a forwarded tools/list answer
// are learnt (data-plane/listed-tools.ts), after the answer, never delaying it.
import { type ErrorCode, formatErrorMessage } from '../../shared/errors/index.js';
import { JSONRPC_ERROR_CODES, MCP_METHODS } from '../../shared/mcp/protocol.js';
import { UpstreamError } from '../upstream/index.js';
import type { InspectAnswer } from './answers.js';
import type { AccessTokenMinter, InspectDependencies } from './dependencies.js';
import { type AgentExchange, type Exchange, sendAnswer } from './exchange.js';

export async function forwardCall(
  deps: InspectDependencies,
  exchange: AgentExchange,
  answer: InspectAnswer,
): Promise<void> {
  const { tenant, agent, server, call } = exchange;
  if (!server) {
    // Shadow mode forwards calls to servers that are not whitelisted too: say only what is true.
    const whitelisted = tenant.policy.trustedServers.has(call.serverId);
    return answerUpstreamFailure(
      deps,
      exchange,
      answer,
      'MCP_SERVER_NOT_REGISTERED',
      formatErrorMessage('MCP_SERVER_NOT_REGISTERED', {
        serverId: call.serverId,
        registration: whitelisted ? 'whitelisted but not registered' : 'not registered',
      }),
    );
  }
  let accessToken: string | undefined;
  if (tenant.policy.oauthMode === 'mcp_as' || deps.requireMcpOAuth) {
    accessToken = await mintForwardToken(deps, { tenant, agent, server });
    // Fail closed: a forward that must carry a token never leaves without one.
    if (accessToken === undefined) {
      return answerUpstreamFailure(
        deps,
        exchange,
        answer,
        'MCP_OAUTH_UNAVAILABLE',
        formatErrorMessage('MCP_OAUTH_UNAVAILABLE'),
      );
    }
  }
  const execution = deps.executions.begin(agent.id);
  const started = performance.now();
  try {
    const result = await deps.upstream.forward({
      target: { serverKey: server.serverKey, url: server.url },
      sessionKey: `${tenant.id}/${agent.id}/${server.serverId}`,
      message: {
        jsonrpc: '2.0',
        id: call.rpc.id,
        method: call.rpc.method,
        params: call.rpc.params,
      },
      signal: execution.signal,
      accessToken,
    });
    deps.metrics.upstreamDuration.observe({ outcome: 'ok' }, (performance.now() - started) / 1000);
    answer.response = result.response;
    const sent = sendAnswer(deps, exchange, answer);
    // After the answer is on its way: reading and hashing the listed tools never delays it.
    if (call.rpc.method === MCP_METHODS.TOOLS_LIST && 'result' in result.response) {
      deps.listedTools?.record(
        { tenantId: tenant.id, serverId: server.serverId, url: server.url },
        result.response.result,
      );
    }
    return sent;
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    deps.metrics.upstreamDuration.observe(
      { outcome: error.code },
      (performance.now() - started) / 1000,
    );
    // Aborted by the kill switch: say so (the signal's reason names the killed agent).
    const detail =
      error.code === 'MCP_UPSTREAM_ABORTED' && execution.signal.reason instanceof Error
        ? `the forward was aborted: ${execution.signal.reason.message}`
        : error.detail;
    return answerUpstreamFailure(deps, exchange, answer, error.code, detail);
  } finally {
    execution.end();
  }
}

function answerUpstreamFailure(
  deps: InspectDependencies,
  exchange: Exchange,
  answer: InspectAnswer,
  code: ErrorCode,
  message: string,
): void {
  answer.reasonCode = code;
  answer.message = message;
  answer.response = {
    jsonrpc: '2.0',
    id: exchange.call.rpc.id,
    error: { code: JSONRPC_ERROR_CODES.UPSTREAM_FAILED, message, data: { reasonCode: code } },
  };
  sendAnswer(deps, exchange, answer);
}

/** A gateway-minted token for the forward; undefined when none can be had (no signer, or it failed). */
async function mintForwardToken(
  deps: InspectDependencies,
  input: Parameters<AccessTokenMinter>[0],
): Promise<string | undefined> {
  if (!deps.mintAccessToken) return undefined;
  try {
    return await deps.mintAccessToken(input);
  } catch (error) {
    deps.logger.info({ err: error, tenantId: input.tenant.id }, 'minting the forward token failed');
    return undefined;
  }
}
