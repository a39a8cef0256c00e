// The proxy's message handling, below the transport and above the upstream session: what each
// client message becomes. The transport (transport/streamable-http.ts) has already checked the
// origin, authenticated the caller, parsed the body and found the session.
// - initialize: checks the agent and the server (whitelisted, registered, identity when the
//   tenant requires it), opens the client's own upstream session with the client's initialize
//   sent unchanged (so the upstream session declares the client's capabilities), and answers the
//   upstream's result; an upstream that refuses it as only a server of the stateless era does is
//   bridged: the gateway keeps the session and answers initialize from the server's
//   server/discover, and each request goes upstream as a stateless one
//   (upstream/stateless-session.ts);
// - tools/call: governance (tools-call.ts); tools/list: filtered (tools-list.ts);
// - every other request (resources, prompts, completion, logging, ping, tasks…): passes through,
//   subject to the gateway's method blocking;
// - notifications and the client's answers to server-initiated requests: passed to the upstream
//   session (a blocked notification is dropped).
// Every request re-reads the tenant from the current snapshot, so a kill or a policy change
// applies to sessions already open. Requests of the stateless era (2026-07-28) are stateless.ts's;
// the refusals and the upstream token below serve both.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { formatErrorMessage, gatewayError } from '../../shared/errors/index.js';
import { isRecord } from '../../shared/json/is-record.js';
import {
  GATEWAY_REQUEST_ID_PREFIX,
  JSONRPC_ERROR_CODES,
  LATEST_SESSION_PROTOCOL_VERSION,
  MCP_HEADERS,
  MCP_META_KEYS,
  MCP_METHODS,
  SESSION_PROTOCOL_VERSIONS,
  STATELESS_ERA_ERROR_CODES,
  STATELESS_PROTOCOL_VERSIONS,
} from '../../shared/mcp/protocol.js';
import { auditBlock, auditRevokedAgent } from '../governance/deny.js';
import type { Block } from '../governance/exchange.js';
import { refusePassthrough } from '../governance/token-passthrough.js';
import type { CompiledServer, CompiledTenant } from '../store/compiled-snapshot.js';
import type { ProxyCaller } from './auth.js';
import type { McpProxyDependencies } from './dependencies.js';
import { identityRequired } from './identity-required.js';
import { auditedCall, relayServerMessage } from './relay.js';
import { rpcError, unsupportedVersion, upstreamFailureOf } from './rpc-errors.js';
import type { ProxySession } from './sessions.js';
import { type StatelessHost, StatelessService } from './stateless.js';
import { proxyToolCall } from './tools-call.js';
import { permittedTools } from './tools-list.js';
import type {
  JsonRpcMessage,
  JsonRpcRequestMessage,
  JsonRpcResponseMessage,
} from './transport/messages.js';
import type { CallStream, ServerStream } from './transport/response-stream.js';
import type { UpstreamSession } from './upstream/index.js';

export interface IncomingRequest {
  readonly caller: ProxyCaller;
  readonly message: JsonRpcRequestMessage;
  readonly stream: CallStream;
  readonly headers: IncomingHttpHeaders;
  readonly protocolVersion: string;
}

export class McpProxy implements StatelessHost {
  readonly #deps: McpProxyDependencies;
  readonly #stopping: AbortSignal;

  /** The stateless era's requests (stateless.ts). */
  readonly stateless: StatelessService;

  /** `stopping`: aborted when the server starts closing (held calls stop waiting). */
  constructor(deps: McpProxyDependencies, stopping: AbortSignal) {
    this.#deps = deps;
    this.#stopping = stopping;
    this.stateless = new StatelessService(this, stopping);
  }

  get deps(): McpProxyDependencies {
    return this.#deps;
  }

  /** initialize: opens the session; resolves with it (undefined when refused). */
  async initialize(
    caller: ProxyCaller,
    serverId: string,
    message: JsonRpcRequestMessage,
    stream: CallStream,
  ): Promise<ProxySession | undefined> {
    const deps = this.#deps;
    const tenant = deps.store.current?.tenants.get(caller.tenantId);
    if (!tenant) {
      stream.respond(
        rpcError(message.id, JSONRPC_ERROR_CODES.GATEWAY_DENIED, 'AGENT_UNKNOWN', 'no such tenant'),
      );
      return undefined;
    }
    const refusal =
      this.#refuseSession(tenant, caller, serverId) ?? refusePassthrough(undefined, message.params);
    if (refusal) {
      await this.deny(tenant, caller, serverId, message, refusal, stream);
      return undefined;
    }
    const server = tenant.servers.get(serverId)!;
    const agent = tenant.agents.get(caller.agentId)!;
    let opened: Awaited<ReturnType<McpProxyDependencies['upstreamSessions']['open']>>;
    try {
      opened = await deps.upstreamSessions.open(
        {
          target: { serverKey: server.serverKey, url: server.url },
          authorization: this.forwardToken(tenant.id, agent.id, serverId),
          connectTimeoutMs: deps.limits.connectTimeoutMs,
          readTimeoutMs: deps.limits.readTimeoutMs,
          maxMessageBytes: deps.limits.maxMessageBytes,
        },
        message as never,
      );
    } catch (error) {
      const failure = upstreamFailureOf(error);
      if (!failure) throw error;
      stream.respond(
        rpcError(message.id, JSONRPC_ERROR_CODES.UPSTREAM_FAILED, failure.code, failure.detail),
      );
      return undefined;
    }
    const params = message.params ?? {};
    const clientCapabilities = isRecord(params.capabilities) ? params.capabilities : {};
    let upstream: UpstreamSession;
    let answer: JsonRpcResponseMessage;
    if (opened.session) {
      upstream = opened.session;
      answer = opened.response as JsonRpcResponseMessage;
    } else {
      const refused = opened.response as JsonRpcResponseMessage;
      if (!speaksOnlyStatelessEra(opened.status, refused)) {
        stream.respond(refused);
        return undefined;
      }
      // A server of the stateless era only: the gateway keeps the session (session-bridge docs).
      const bridged = await this.#bridgeToStateless(tenant.id, agent.id, server, message);
      if (bridged === undefined) {
        stream.respond(statelessEraOnly(message, refused), 400);
        return undefined;
      }
      ({ upstream, answer } = bridged);
    }
    const session = deps.sessions.create({
      tenantId: tenant.id,
      agentId: agent.id,
      serverId,
      upstream,
      protocolVersion: upstream.protocolVersion,
      clientCapabilities,
    });
    upstream.onGone = () => deps.sessions.close(session);
    stream.setHeader(MCP_HEADERS.SESSION_ID, session.id);
    stream.respond(answer);
    return session;
  }

  /**
   * A session client of a server that speaks only the stateless era: an upstream session that
   * makes each request a stateless one (upstream/stateless-session.ts), and the answer to the
   * client's initialize made from the server's server/discover: the client's revision when the
   * gateway speaks it, the server's capabilities, serverInfo and instructions. Undefined when
   * the server cannot be discovered (the client is then told which revisions it speaks).
   */
  async #bridgeToStateless(
    tenantId: string,
    agentId: string,
    server: CompiledServer,
    initialize: JsonRpcRequestMessage,
  ): Promise<{ upstream: UpstreamSession; answer: JsonRpcResponseMessage } | undefined> {
    const deps = this.#deps;
    const params = initialize.params ?? {};
    const requested = String(params.protocolVersion ?? '');
    const protocolVersion = (SESSION_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
      ? requested
      : LATEST_SESSION_PROTOCOL_VERSION;
    const upstream = deps.upstreamSessions.statelessSession(
      {
        target: { serverKey: server.serverKey, url: server.url },
        authorization: this.forwardToken(tenantId, agentId, server.serverId),
        connectTimeoutMs: deps.limits.connectTimeoutMs,
        readTimeoutMs: deps.limits.readTimeoutMs,
        maxMessageBytes: deps.limits.maxMessageBytes,
      },
      {
        protocolVersion,
        clientInfo: params.clientInfo,
        capabilities: isRecord(params.capabilities) ? params.capabilities : {},
      },
    );
    let discovered: JsonRpcResponseMessage;
    try {
      discovered = (await upstream.request({
        jsonrpc: '2.0',
        id: `agent-gateway-${randomUUID()}`,
        method: MCP_METHODS.SERVER_DISCOVER,
        params: {},
      })) as JsonRpcResponseMessage;
    } catch (error) {
      if (!upstreamFailureOf(error)) throw error;
      return undefined;
    }
    const result = discovered.result;
    if (!isRecord(result)) return undefined;
    const meta = isRecord(result._meta) ? result._meta : {};
    const serverInfo = meta[MCP_META_KEYS.SERVER_INFO];
    return {
      upstream,
      answer: {
        jsonrpc: '2.0',
        id: initialize.id,
        result: {
          protocolVersion,
          capabilities: isRecord(result.capabilities) ? result.capabilities : {},
          serverInfo: isRecord(serverInfo) ? serverInfo : { name: server.serverId, version: '0' },
          ...(typeof result.instructions === 'string' ? { instructions: result.instructions } : {}),
        },
      },
    };
  }

  /** A request on an open session; resolves once its response is on the client's stream. */
  async request(session: ProxySession, incoming: IncomingRequest): Promise<void> {
    const deps = this.#deps;
    const { message, stream, caller } = incoming;
    const tenant = deps.store.current?.tenants.get(session.tenantId);
    const agent = tenant?.agents.get(session.agentId);
    if (!tenant || !agent || agent.killed) {
      deps.sessions.close(session);
      const code = agent?.killed ? 'AGENT_REVOKED' : 'AGENT_UNKNOWN';
      if (tenant && agent?.killed) {
        await auditRevokedAgent(
          deps,
          tenant.id,
          agent.id,
          formatErrorMessage(code, { agentId: agent.id }),
        );
      }
      stream.respond(
        rpcError(
          message.id,
          JSONRPC_ERROR_CODES.GATEWAY_DENIED,
          code,
          formatErrorMessage(code, { agentId: session.agentId }),
        ),
      );
      return;
    }
    if (
      tenant.policy.requireAgentIdentity &&
      !caller.identityProven &&
      message.method === MCP_METHODS.TOOLS_CALL
    ) {
      await this.deny(tenant, caller, session.serverId, message, identityRequired(), stream);
      return;
    }
    if (message.method === MCP_METHODS.TOOLS_CALL) {
      await proxyToolCall({
        deps,
        session,
        tenant,
        message,
        stream,
        headers: incoming.headers,
        protocolVersion: incoming.protocolVersion,
        stopping: this.#stopping,
      });
      return;
    }
    const refusal =
      refusePassthrough(undefined, message.params) ??
      this.refuseMethod(tenant, session.serverId, message.method);
    if (refusal) {
      await this.deny(tenant, caller, session.serverId, message, refusal, stream);
      return;
    }
    const response = await this.#forward(session, tenant, incoming);
    if (response === undefined) return;
    if (message.method === MCP_METHODS.TOOLS_LIST && response.result !== undefined) {
      const server = tenant.servers.get(session.serverId);
      if (server) {
        stream.respond({
          ...response,
          result: permittedTools(response.result, tenant, agent, server),
        });
        deps.listedTools?.record(
          { tenantId: tenant.id, serverId: session.serverId, url: server.url },
          response.result,
        );
        return;
      }
    }
    stream.respond(response);
  }

  /** A notification or a response from the client: to the upstream session. */
  async deliver(
    session: ProxySession,
    message: JsonRpcMessage,
    isNotification: boolean,
  ): Promise<void> {
    const tenant = this.#deps.store.current?.tenants.get(session.tenantId);
    if (!tenant) return;
    // The answer to the gateway's own request (the approval page's URL elicitation) is the
    // gateway's: the approval, not the client's answer, decides the call.
    const answered = isNotification ? undefined : (message as JsonRpcResponseMessage).id;
    if (typeof answered === 'string' && answered.startsWith(GATEWAY_REQUEST_ID_PREFIX)) return;
    if (isNotification && tenant.policy.isMethodBlocked((message as { method: string }).method))
      return;
    // A token in a notification's params._meta or an answer's result._meta would reach the
    // upstream as well: the message is dropped (there is no one to answer) and the deny audited.
    const refusal = isNotification
      ? refusePassthrough(
          undefined,
          (message as { params?: Record<string, unknown> }).params,
          'notification.params',
        )
      : refusePassthrough(
          undefined,
          resultOf(message as JsonRpcResponseMessage),
          'response.result',
        );
    if (refusal) {
      const method = isNotification ? (message as { method: string }).method : 'response';
      const id = isNotification ? null : (message as JsonRpcResponseMessage).id;
      await auditBlock(
        this.#deps,
        tenant,
        auditedCall(session, id, method),
        randomUUID(),
        null,
        refusal,
      );
      return;
    }
    try {
      await session.upstream.send(message as never, { signal: session.closed.signal });
    } catch (error) {
      if (!upstreamFailureOf(error)) throw error;
      this.#deps.logger.debug(
        { err: error, sessionId: session.id },
        'mcp proxy: relaying to the upstream failed',
      );
    }
  }

  /**
   * The client's GET stream: what the upstream sends outside any request. The upstream's own GET
   * stream is opened with the first one and relays to whichever stream the client has open.
   */
  listen(session: ProxySession, stream: ServerStream): void {
    const deps = this.#deps;
    session.serverStream = stream;
    stream.onClose(() => {
      if (session.serverStream === stream) session.serverStream = undefined;
    });
    // A stateless upstream has no session to send anything outside a request for.
    if (this.#listening.has(session) || session.upstream.sessionId === undefined) return;
    this.#listening.add(session);
    session.upstream.listen(
      (message) => {
        const tenant = deps.store.current?.tenants.get(session.tenantId);
        if (tenant) relayServerMessage(deps, session, tenant, message, session.serverStream);
      },
      () => this.#listening.delete(session),
    );
  }

  readonly #listening = new WeakSet<ProxySession>();

  async #forward(
    session: ProxySession,
    tenant: CompiledTenant,
    incoming: IncomingRequest,
  ): Promise<JsonRpcResponseMessage | undefined> {
    const { message, stream } = incoming;
    // No signal: closing the session aborts its upstream calls, and a client that goes away does
    // not cancel (MCP: it sends notifications/cancelled to cancel).
    try {
      return (await session.upstream.request(message as never, {
        protocolVersion: incoming.protocolVersion,
        onMessage: (relayed) => relayServerMessage(this.#deps, session, tenant, relayed, stream),
      })) as JsonRpcResponseMessage;
    } catch (error) {
      const failure = upstreamFailureOf(error);
      if (!failure) throw error;
      stream.respond(
        rpcError(message.id, JSONRPC_ERROR_CODES.UPSTREAM_FAILED, failure.code, failure.detail),
      );
      return undefined;
    }
  }

  /** Why this caller may not open a session to this server, or undefined. */
  #refuseSession(tenant: CompiledTenant, caller: ProxyCaller, serverId: string): Block | undefined {
    return (
      this.refuseCaller(tenant, caller) ??
      this.refuseMethod(tenant, serverId, MCP_METHODS.INITIALIZE) ??
      this.unregistered(tenant, serverId)
    );
  }

  /** Why this caller may not reach any server: unknown or killed agent, identity not proven. */
  refuseCaller(tenant: CompiledTenant, caller: ProxyCaller): Block | undefined {
    const agent = tenant.agents.get(caller.agentId);
    if (!agent) {
      return {
        code: 'AGENT_UNKNOWN',
        message: formatErrorMessage('AGENT_UNKNOWN', { agentId: caller.agentId }),
      };
    }
    if (agent.killed) {
      return {
        code: 'AGENT_REVOKED',
        message: formatErrorMessage('AGENT_REVOKED', { agentId: agent.id }),
      };
    }
    if (tenant.policy.requireAgentIdentity && !caller.identityProven) return identityRequired();
    return undefined;
  }

  refuseMethod(tenant: CompiledTenant, serverId: string, method: string): Block | undefined {
    if (!tenant.policy.trustedServers.has(serverId)) {
      return {
        code: 'MCP_SERVER_NOT_WHITELISTED',
        message: formatErrorMessage('MCP_SERVER_NOT_WHITELISTED', { serverId }),
      };
    }
    if (tenant.policy.isMethodBlocked(method)) {
      return {
        code: 'MCP_METHOD_BLOCKED',
        message: formatErrorMessage('MCP_METHOD_BLOCKED', { kind: 'method', name: method }),
      };
    }
    return undefined;
  }

  unregistered(tenant: CompiledTenant, serverId: string): Block | undefined {
    if (tenant.servers.has(serverId)) return undefined;
    return {
      code: 'MCP_SERVER_NOT_REGISTERED',
      message: formatErrorMessage('MCP_SERVER_NOT_REGISTERED', {
        serverId,
        registration: 'whitelisted but not registered',
      }),
    };
  }

  /** An audited refusal, answered as a JSON-RPC error (durable before it is sent). */
  async deny(
    tenant: CompiledTenant,
    caller: ProxyCaller,
    serverId: string,
    message: JsonRpcRequestMessage,
    block: Block,
    stream: CallStream,
  ): Promise<void> {
    const inspectionId = randomUUID();
    const call = auditedCall(
      { id: 'none', agentId: caller.agentId, serverId },
      message.id,
      message.method,
    );
    const auditId = await auditBlock(this.#deps, tenant, call, inspectionId, null, block);
    stream.respond(
      rpcError(message.id, JSONRPC_ERROR_CODES.GATEWAY_DENIED, block.code, block.message, {
        inspectionId,
        auditId,
      }),
    );
  }

  /** Gateway-minted tokens for the upstream under oauthMode mcp_as (cached by the minter). */
  forwardToken(tenantId: string, agentId: string, serverId: string) {
    const deps = this.#deps;
    return async (): Promise<string | undefined> => {
      const tenant = deps.store.current?.tenants.get(tenantId as never);
      if (!tenant || (tenant.policy.oauthMode !== 'mcp_as' && !deps.requireMcpOAuth))
        return undefined;
      const agent = tenant.agents.get(agentId as never);
      const server = tenant.servers.get(serverId as never);
      // Fail closed: a session that must carry a token never reaches the upstream without one.
      if (!agent || !server || !deps.mintAccessToken) throw gatewayError('MCP_OAUTH_UNAVAILABLE');
      try {
        return await deps.mintAccessToken({ tenant, agent, server });
      } catch (error) {
        deps.logger.info({ err: error, tenantId }, 'mcp proxy: minting the forward token failed');
        throw gatewayError('MCP_OAUTH_UNAVAILABLE');
      }
    };
  }
}

/** True when an upstream refused initialize the way a server of the stateless era only does. */
function speaksOnlyStatelessEra(status: number, response: JsonRpcResponseMessage): boolean {
  const code = response.error?.code;
  return status >= 400 && status < 500 && code !== undefined && STATELESS_ERA_ERROR_CODES.has(code);
}

/** The client's initialize refused: its upstream speaks the stateless era only (no bridging). */
function statelessEraOnly(
  message: JsonRpcRequestMessage,
  refused: JsonRpcResponseMessage,
): JsonRpcResponseMessage {
  const data = refused.error?.data as { supported?: unknown } | undefined;
  const supported =
    Array.isArray(data?.supported) && data.supported.every((v) => typeof v === 'string')
      ? data.supported
      : STATELESS_PROTOCOL_VERSIONS;
  return unsupportedVersion(
    message.id,
    String(message.params?.protocolVersion ?? ''),
    supported,
    `this server speaks only ${supported.join(', ')}, without initialize`,
  );
}

/** An answer's result, where its `_meta` travels. */
function resultOf(message: JsonRpcResponseMessage): Record<string, unknown> | undefined {
  const result = message.result;
  return isRecord(result) ? result : undefined;
}
