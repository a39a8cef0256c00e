// What the upstream sends the client on its own initiative, on a call's stream or on the
// session's GET stream: notifications (progress, log messages, list changes) and requests
// (sampling, elicitation, roots). The tenant's method blocking applies to them as to the client's
// own calls, so a tenant can forbid an upstream from sampling through its agents: a blocked
// request is answered to the upstream by the proxy with a JSON-RPC error (and audited), never
// shown to the client; a blocked notification is dropped. Everything else passes unchanged (ids
// included: one upstream session per client, so the upstream's ids cannot collide with
// another's); the client's answer comes back as a POSTed response and goes to the same upstream
// session (proxy.ts).
import { randomUUID } from 'node:crypto';
import { formatErrorMessage } from '../../shared/errors/index.js';
import type { ServerId } from '../../shared/ids.js';
import { JSONRPC_ERROR_CODES } from '../../shared/mcp/protocol.js';
import { appendDenyAudit } from '../governance/deny.js';
import type { InspectRequest } from '../governance/request.js';
import type { CompiledTenant } from '../store/compiled-snapshot.js';
import type { McpProxyDependencies } from './dependencies.js';
import { rpcError } from './rpc-errors.js';
import type { ProxySession } from './sessions.js';
import { type JsonRpcId, kindOf } from './transport/messages.js';

interface Sink {
  send(message: never): boolean;
}

export function relayServerMessage(
  deps: McpProxyDependencies,
  session: ProxySession,
  tenant: CompiledTenant,
  message: unknown,
  sink: Sink | undefined,
): void {
  const kind = kindOf(message);
  if (kind !== 'request' && kind !== 'notification') return;
  const { method, id } = message as { method: string; id?: JsonRpcId };
  const current = deps.store.current?.tenants.get(tenant.id) ?? tenant;
  if (current.policy.isMethodBlocked(method)) {
    if (kind === 'request') refuseServerRequest(deps, session, current, id as JsonRpcId, method);
    return;
  }
  if (sink?.send(message as never)) return;
  if (kind === 'request') {
    answerUpstream(
      deps,
      session,
      rpcError(
        id as JsonRpcId,
        JSONRPC_ERROR_CODES.INTERNAL_ERROR,
        'MCP_UPSTREAM_ERROR',
        `the client has no open stream to receive ${method}`,
      ),
    );
  }
}

function refuseServerRequest(
  deps: McpProxyDependencies,
  session: ProxySession,
  tenant: CompiledTenant,
  id: JsonRpcId,
  method: string,
): void {
  const message = formatErrorMessage('MCP_METHOD_BLOCKED', { kind: 'method', name: method });
  answerUpstream(
    deps,
    session,
    rpcError(id, JSONRPC_ERROR_CODES.GATEWAY_DENIED, 'MCP_METHOD_BLOCKED', message),
  );
  appendDenyAudit(deps, tenant, auditedCall(session, id, method), randomUUID(), null, {
    code: 'MCP_METHOD_BLOCKED',
    message: `upstream ${session.serverId} asked the agent: ${message}`,
  }).catch((error: unknown) =>
    deps.logger.info({ err: error }, 'mcp proxy: auditing a blocked server request failed'),
  );
}

function answerUpstream(deps: McpProxyDependencies, session: ProxySession, response: object): void {
  session.upstream.send(response as never).catch((error: unknown) => {
    deps.logger.debug(
      { err: error, sessionId: session.id },
      'mcp proxy: answering the upstream failed',
    );
  });
}

/** What the audit entry of a message the proxy refused says about it. */
export function auditedCall(
  session: Pick<ProxySession, 'id' | 'agentId' | 'serverId'>,
  id: JsonRpcId | null,
  method: string,
): InspectRequest {
  return {
    agentId: session.agentId,
    executionId: `mcp:${session.id}:${String(id)}`,
    serverId: session.serverId as ServerId,
    toolName: '',
    mode: 'production',
    rpc: { jsonrpc: '2.0', id: id ?? '', method, params: undefined, arguments: {} },
    policy: undefined,
    approvalId: undefined,
    agentCredential: undefined,
    delegationChain: undefined,
    forward: false,
  };
}
