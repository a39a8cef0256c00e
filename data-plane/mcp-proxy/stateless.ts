// MCP's stateless era (2026-07-28) through the proxy, beside the sessions of proxy.ts: every
// request stands alone. The transport (transport/streamable-http.ts) has checked the origin, the
// caller and what the revision requires of the request (shared/mcp/stateless-request.ts); here,
// per request:
// - the caller is checked as a session's opener is (agent known and not killed, identity when the
//   tenant requires it, server registered); the request goes upstream on an exchange of its own
//   (upstream/stateless.ts) with the gateway's token, never the client's;
// - tools/call: the same governance as on a session (tools-call.ts: whitelist, pins, detectors,
//   NPL, limits, approvals, audit), with a session object that lives for this one call;
// - tools/list: filtered for the agent (tools-list.ts), sorted by name (a deterministic order
//   whatever the upstream's), and marked `cacheScope: "private"` with the gateway's `ttlMs`
//   (AGENT_GATEWAY_MCP_LIST_TTL_MS): the answer is this agent's alone;
// - server/discover: the upstream's, seen through the gateway: the revisions both speak, private
//   to the agent, the gateway's serverInfo with the upstream's beside it and the tools this agent
//   may see (GATEWAY_META_KEYS);
// - subscriptions/listen: the upstream's stream relayed, and the gateway's own
//   `notifications/tools/list_changed` on it when a snapshot changes which tools the agent sees
//   (the ack then says toolsListChanged even when the upstream cannot);
// - everything else (resources, prompts, completion, an upstream's InputRequiredResult rounds):
//   relayed unchanged, subject to method blocking and the `_meta` credential scan, with the
//   upstream's HTTP status (this era gives 404 and 400 answers a meaning the client reads).
// Which era a server speaks is learnt with the first request to it (a server/discover asked
// first, and any answer since) and remembered for five minutes (upstream-eras.ts): an upstream
// that answers a stateless request with a 4xx that is not one of this era's errors speaks only
// the session era, and its requests go over the gateway's own upstream session for the agent
// (session-bridge.ts).
// Everything above applies unchanged: the bridge only carries the requests.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { formatErrorMessage } from '../../shared/errors/index.js';
import type { AgentId, ApprovalId } from '../../shared/ids.js';
import { isRecord } from '../../shared/json/is-record.js';
import {
  GATEWAY_META_KEYS,
  JSONRPC_ERROR_CODES,
  MCP_CACHE_SCOPES,
  MCP_HEADERS,
  MCP_META_KEYS,
  MCP_METHODS,
  MCP_PARAM_HEADER_PREFIX,
  STATELESS_PROTOCOL_VERSIONS,
} from '../../shared/mcp/protocol.js';
import type { StatelessRequest } from '../../shared/mcp/stateless-request.js';
import { findApproval } from '../../storage/tables/approvals.js';
import type { Block } from '../governance/exchange.js';
import { refusePassthrough } from '../governance/token-passthrough.js';
import type { CompiledAgent, CompiledServer, CompiledTenant } from '../store/compiled-snapshot.js';
import type { ProxyCaller } from './auth.js';
import { CallRounds, type Inbound, pendingReason } from './call-rounds.js';
import type { McpProxyDependencies } from './dependencies.js';
import { gatewayServerInfo } from './gateway-info.js';
import { relayServerMessage } from './relay.js';
import { rpcError, upstreamFailureOf } from './rpc-errors.js';
import { type BridgedUpstream, SessionBridges } from './session-bridge.js';
import type { ProxySession } from './sessions.js';
import { proxyToolCall } from './tools-call.js';
import { permittedTools } from './tools-list.js';
import type {
  JsonRpcMessage,
  JsonRpcRequestMessage,
  JsonRpcResponseMessage,
} from './transport/messages.js';
import { ReplayLogs } from './transport/replay.js';
import { type CallStream, ServerStream } from './transport/response-stream.js';
import type { StatelessUpstream } from './upstream/index.js';
import { answersLikeSessionEra, type UpstreamEra, UpstreamEras } from './upstream-eras.js';

/** A tools/call's requestState, accepted. */
type AcceptedInbound = Exclude<Inbound, { readonly kind: 'refused' }>;

/** One request's exchange with its upstream: its own, or over the agent's bridged session. */
type RequestUpstream = StatelessUpstream | BridgedUpstream;

/** Listen streams one agent may hold open on one data plane. */
export const MAX_LISTEN_STREAMS_PER_AGENT = 32;

/**
 * What the stateless era uses of the session-era proxy (proxy.ts implements it): the same
 * dependencies, refusals, audited denies and upstream token, so both eras decide alike.
 */
export interface StatelessHost {
  readonly deps: McpProxyDependencies;
  refuseCaller(tenant: CompiledTenant, caller: ProxyCaller): Block | undefined;
  refuseMethod(tenant: CompiledTenant, serverId: string, method: string): Block | undefined;
  unregistered(tenant: CompiledTenant, serverId: string): Block | undefined;
  deny(
    tenant: CompiledTenant,
    caller: ProxyCaller,
    serverId: string,
    message: JsonRpcRequestMessage,
    block: Block,
    stream: CallStream,
  ): Promise<void>;
  forwardToken(
    tenantId: string,
    agentId: string,
    serverId: string,
  ): () => Promise<string | undefined>;
}

export interface StatelessIncoming {
  readonly caller: ProxyCaller;
  readonly serverId: string;
  readonly message: JsonRpcRequestMessage;
  readonly checked: StatelessRequest;
  readonly headers: IncomingHttpHeaders;
  readonly stream: CallStream;
}

/** An open subscriptions/listen stream that asked for tool list changes. */
interface ToolListener {
  readonly tenantId: string;
  readonly agentId: AgentId;
  readonly serverId: string;
  readonly subscriptionId: string;
  readonly send: (message: JsonRpcMessage) => void;
  /** The upstream's last tools/list result, and the names this agent saw of it. */
  listed: unknown;
  visible: string;
}

export class StatelessService {
  readonly #proxy: StatelessHost;
  readonly #stopping: AbortSignal;
  /** The era each upstream server speaks, as learnt. */
  readonly #eras = new UpstreamEras();
  readonly #bridges: SessionBridges;
  readonly #toolListeners = new Set<ToolListener>();

  constructor(proxy: StatelessHost, stopping: AbortSignal) {
    this.#proxy = proxy;
    this.#stopping = stopping;
    this.#bridges = new SessionBridges(proxy.deps.upstreamSessions);
    stopping.addEventListener('abort', () => this.#bridges.close().catch(() => {}), { once: true });
    proxy.deps.sessions.onAgentClosed((tenantId, agentId) =>
      this.#bridges.closeWhere((t, a) => t === tenantId && a === agentId),
    );
    proxy.deps.store.onApply(() => {
      this.#announceToolChanges();
      const snapshot = proxy.deps.store.current;
      this.#bridges.closeWhere((tenantId, agentId) => {
        const agent = snapshot?.tenants.get(tenantId as never)?.agents.get(agentId as never);
        return agent === undefined || agent.killed;
      });
    });
  }

  /** Serves one request; resolves once its answer is complete (a listen stream: ended). */
  async serve(incoming: StatelessIncoming): Promise<void> {
    const proxy = this.#proxy;
    const deps = proxy.deps;
    const { caller, serverId, message, stream } = incoming;
    const tenant = deps.store.current?.tenants.get(caller.tenantId);
    if (!tenant) {
      stream.respond(
        rpcError(message.id, JSONRPC_ERROR_CODES.GATEWAY_DENIED, 'AGENT_UNKNOWN', 'no such tenant'),
      );
      return;
    }
    const refusal = this.#refuse(tenant, caller, serverId, message);
    if (refusal) {
      await proxy.deny(tenant, caller, serverId, message, refusal, stream);
      return;
    }
    const server = tenant.servers.get(serverId)!;
    const agent = tenant.agents.get(caller.agentId)!;
    // A tools/call's requestState is judged first: a refused one reaches no upstream at all.
    let rounds: CallRounds | undefined;
    let inbound: AcceptedInbound | undefined;
    if (message.method === MCP_METHODS.TOOLS_CALL) {
      rounds = new CallRounds(deps, {
        tenantId: tenant.id,
        agentId: agent.id,
        serverId,
        message,
        clientCapabilities: incoming.checked.clientCapabilities,
      });
      const judged = rounds.inbound();
      if (judged.kind === 'refused') {
        await proxy.deny(tenant, caller, serverId, message, judged.block, stream);
        return;
      }
      inbound = judged;
    }
    const era = await this.#eraOf(tenant, agent, server, incoming);
    const upstream = this.#upstream(tenant, agent, server, incoming, undefined, era);
    const listen = message.method === MCP_METHODS.SUBSCRIPTIONS_LISTEN;
    const untrack = deps.sessions.track(tenant.id, agent.id, listen ? 'listen' : 'request', () => {
      upstream.close().catch(() => {});
    });
    // In this era a client that closes its stream cancels its request (not one answered).
    let served = false;
    stream.onClose(() => {
      if (!served) upstream.close().catch(() => {});
    });
    try {
      if (listen) {
        await this.#listen(tenant, agent, server, incoming, upstream);
        return;
      }
      const session = statelessSession(tenant, agent, serverId, upstream, incoming.checked);
      if (rounds !== undefined && inbound !== undefined) {
        await this.#toolCall(tenant, caller, session, incoming, upstream, rounds, inbound);
        return;
      }
      await this.#relay(tenant, agent, server, session, incoming, upstream);
    } finally {
      served = true;
      untrack();
    }
  }

  /**
   * tools/call, across its rounds (call-rounds.ts): a fresh call is governed; the retry of a
   * held call is answered from its approval (still pending: the same InputRequiredResult, without
   * deciding or auditing anything again; decided: governed with it); a later round of an allowed
   * call goes upstream as decided; a requestState the gateway cannot trust is refused, audited.
   */
  async #toolCall(
    tenant: CompiledTenant,
    caller: ProxyCaller,
    session: ProxySession,
    incoming: StatelessIncoming,
    upstream: RequestUpstream,
    rounds: CallRounds,
    inbound: AcceptedInbound,
  ): Promise<void> {
    const deps = this.#proxy.deps;
    const { stream } = incoming;
    if (inbound.kind === 'round') {
      await this.#nextRound(tenant, session, inbound.message, rounds, incoming, upstream);
      return;
    }
    let approvalId: ApprovalId | undefined;
    if (inbound.kind === 'approval') {
      approvalId = inbound.approvalId;
      const approval = inbound.expired
        ? undefined
        : await findApproval(deps.db, tenant.id, inbound.approvalId);
      if (approval?.status === 'pending' && approval.callDigest === rounds.digest) {
        const { response, status } = rounds.held(
          { ...approval, expiresAt: approval.expiresAt.toISOString() },
          'APPROVAL_PENDING',
          pendingReason(approval.id),
        );
        stream.respond(response, status);
        return;
      }
      if (inbound.expired) {
        await this.#proxy.deny(
          tenant,
          caller,
          session.serverId,
          incoming.message,
          {
            code: 'APPROVAL_EXPIRED',
            message: formatErrorMessage('APPROVAL_EXPIRED', { approvalId }),
          },
          stream,
        );
        return;
      }
    }
    await proxyToolCall({
      deps,
      session,
      tenant,
      message: inbound.message,
      stream,
      headers: incoming.headers,
      protocolVersion: incoming.checked.version,
      stopping: this.#stopping,
      upstreamErrorStatus: () => upstream.status || 200,
      rounds,
      ...(approvalId === undefined ? {} : { approvalId }),
    });
  }

  /** A later round of an allowed call: forwarded as decided (not decided nor counted again). */
  async #nextRound(
    tenant: CompiledTenant,
    session: ProxySession,
    message: JsonRpcRequestMessage,
    rounds: CallRounds,
    incoming: StatelessIncoming,
    upstream: RequestUpstream,
  ): Promise<void> {
    const deps = this.#proxy.deps;
    const { stream } = incoming;
    const execution = deps.executions.begin(session.agentId);
    try {
      const response = (await upstream.request(message as never, {
        signal: execution.signal,
        onMessage: (relayed) => relayServerMessage(deps, session, tenant, relayed, stream),
      })) as JsonRpcResponseMessage;
      stream.respond(rounds.forwarded(response), upstream.status || 200);
    } catch (error) {
      const failure = upstreamFailureOf(error);
      if (!failure) throw error;
      stream.respond(
        rpcError(message.id, JSONRPC_ERROR_CODES.UPSTREAM_FAILED, failure.code, failure.detail),
      );
    } finally {
      execution.end();
    }
  }

  /** Why this request may not go upstream at all (audited as a deny), or undefined. */
  #refuse(
    tenant: CompiledTenant,
    caller: ProxyCaller,
    serverId: string,
    message: JsonRpcRequestMessage,
  ): Block | undefined {
    const proxy = this.#proxy;
    const refusedCaller = proxy.refuseCaller(tenant, caller);
    if (refusedCaller) return refusedCaller;
    const unregistered = proxy.unregistered(tenant, serverId);
    // tools/call meets the whitelist and method blocking in governance, audited with the call.
    if (message.method === MCP_METHODS.TOOLS_CALL) return unregistered;
    if (
      message.method === MCP_METHODS.SUBSCRIPTIONS_LISTEN &&
      proxy.deps.sessions.listenCount(tenant.id, caller.agentId) >= MAX_LISTEN_STREAMS_PER_AGENT
    ) {
      return {
        code: 'MCP_CONCURRENCY_LIMIT',
        message: formatErrorMessage('MCP_CONCURRENCY_LIMIT', {
          scope: 'agent',
          limit: MAX_LISTEN_STREAMS_PER_AGENT,
        }),
      };
    }
    return (
      proxy.refuseMethod(tenant, serverId, message.method) ??
      unregistered ??
      refusePassthrough(undefined, message.params) ??
      undefined
    );
  }

  /** The exchange of one request: its own (stateless upstream), or over the agent's bridge. */
  #upstream(
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    incoming: StatelessIncoming,
    method: string | undefined,
    era: UpstreamEra,
  ): RequestUpstream {
    const deps = this.#proxy.deps;
    const config = {
      target: { serverKey: server.serverKey, url: server.url },
      authorization: this.#proxy.forwardToken(tenant.id, agent.id, server.serverId),
      connectTimeoutMs: deps.limits.connectTimeoutMs,
      readTimeoutMs: deps.limits.readTimeoutMs,
      maxMessageBytes: deps.limits.maxMessageBytes,
    };
    if (era === 'session') {
      return this.#bridges.upstream(
        { tenantId: tenant.id, agentId: agent.id, serverKey: server.serverKey },
        config,
        {
          clientInfo: incoming.checked.clientInfo,
          clientCapabilities: incoming.checked.clientCapabilities,
        },
      );
    }
    return deps.upstreamSessions.stateless({
      ...config,
      protocolVersion: incoming.checked.version,
      forwardedHeaders: forwardedHeaders(incoming.headers, method),
    });
  }

  /**
   * The era `server` speaks: remembered, else learnt by asking it server/discover as this client
   * (upstream-eras.ts). An upstream that cannot be reached is taken to speak this era for this
   * request, and not remembered.
   */
  #eraOf(
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    incoming: StatelessIncoming,
  ): Promise<UpstreamEra> {
    return this.#eras.learn(server.serverKey, async () => {
      const upstream = this.#upstream(
        tenant,
        agent,
        server,
        incoming,
        MCP_METHODS.SERVER_DISCOVER,
        'stateless',
      );
      let response: JsonRpcResponseMessage | undefined;
      try {
        response = (await upstream.request({
          jsonrpc: '2.0',
          id: `agent-gateway-${randomUUID()}`,
          method: MCP_METHODS.SERVER_DISCOVER,
          params: { _meta: incoming.message.params?._meta },
        } as never)) as JsonRpcResponseMessage;
      } catch (error) {
        if (!upstreamFailureOf(error)) throw error;
        if (upstream.status === 0 || upstream.status >= 500) return undefined;
      }
      return answersLikeSessionEra(upstream.status, response) ? 'session' : 'stateless';
    });
  }

  /** A request whose upstream turned out to speak the session era: served again, bridged. */
  #relayOverBridge(
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    session: ProxySession,
    incoming: StatelessIncoming,
  ): Promise<void> {
    const bridged = this.#upstream(tenant, agent, server, incoming, undefined, 'session');
    return this.#relay(tenant, agent, server, { ...session, upstream: bridged }, incoming, bridged);
  }

  /** Every request but tools/call and listen: relayed, with the era's and the gateway's edits. */
  async #relay(
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    session: ProxySession,
    incoming: StatelessIncoming,
    upstream: RequestUpstream,
  ): Promise<void> {
    const deps = this.#proxy.deps;
    const { message, stream } = incoming;
    let discoveredTools: Promise<string[] | undefined> | undefined;
    if (message.method === MCP_METHODS.SERVER_DISCOVER) {
      discoveredTools = this.#visibleTools(tenant, agent, server, incoming);
    }
    let response: JsonRpcResponseMessage;
    try {
      response = (await upstream.request(message as never, {
        onMessage: (relayed) => relayServerMessage(deps, session, tenant, relayed, stream),
      })) as JsonRpcResponseMessage;
    } catch (error) {
      const failure = upstreamFailureOf(error);
      if (!failure) throw error;
      if (this.#answeredLikeSessionEra(server, upstream.status, undefined)) {
        return this.#relayOverBridge(tenant, agent, server, session, incoming);
      }
      stream.respond(
        rpcError(message.id, JSONRPC_ERROR_CODES.UPSTREAM_FAILED, failure.code, failure.detail),
      );
      return;
    }
    if (this.#answeredLikeSessionEra(server, upstream.status, response)) {
      return this.#relayOverBridge(tenant, agent, server, session, incoming);
    }
    const result = response.result;
    if (message.method === MCP_METHODS.TOOLS_LIST && isRecord(result)) {
      deps.listedTools?.record(
        { tenantId: tenant.id, serverId: server.serverId, url: server.url },
        result,
      );
      response = { ...response, result: this.#privateList(tenant, agent, server, result) };
    } else if (discoveredTools !== undefined && isRecord(result)) {
      response = { ...response, result: discovered(result, await discoveredTools, deps) };
    }
    stream.respond(response, upstream.status || 200);
  }

  /**
   * A tools/list result filtered for the agent, in a deterministic order (by name, whatever order
   * the upstream used), cached privately for the gateway's TTL.
   */
  #privateList(
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    result: Readonly<Record<string, unknown>>,
  ): Record<string, unknown> {
    const permitted = permittedTools(result, tenant, agent, server) as Record<string, unknown>;
    const tools = Array.isArray(permitted.tools) ? [...permitted.tools].sort(byName) : undefined;
    return {
      ...permitted,
      ...(tools === undefined ? {} : { tools }),
      ttlMs: this.#proxy.deps.limits.listTtlMs,
      cacheScope: MCP_CACHE_SCOPES.PRIVATE,
    };
  }

  /** The names of the tools this agent sees on the upstream's first tools/list page. */
  async #visibleTools(
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    incoming: StatelessIncoming,
  ): Promise<string[] | undefined> {
    const listed = await this.#listTools(tenant, agent, server, incoming);
    return listed === undefined
      ? undefined
      : toolNames(permittedTools(listed, tenant, agent, server));
  }

  /** The upstream's tools/list (first page), asked with the client's own `_meta`. */
  async #listTools(
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    incoming: StatelessIncoming,
  ): Promise<unknown> {
    const upstream = this.#upstream(
      tenant,
      agent,
      server,
      incoming,
      MCP_METHODS.TOOLS_LIST,
      this.#eras.known(server.serverKey),
    );
    try {
      const meta = incoming.message.params?._meta;
      const response = await upstream.request({
        jsonrpc: '2.0',
        id: `agent-gateway-${randomUUID()}`,
        method: MCP_METHODS.TOOLS_LIST,
        params: { _meta: meta },
      } as never);
      const result = (response as JsonRpcResponseMessage).result;
      if (!isRecord(result)) return undefined;
      this.#proxy.deps.listedTools?.record(
        { tenantId: tenant.id, serverId: server.serverId, url: server.url },
        result,
      );
      return result;
    } catch (error) {
      if (!upstreamFailureOf(error)) throw error;
      return undefined;
    }
  }

  /** subscriptions/listen: the upstream's stream relayed, with the gateway's tool changes. */
  async #listen(
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    incoming: StatelessIncoming,
    upstream: RequestUpstream,
  ): Promise<void> {
    const deps = this.#proxy.deps;
    const { message, stream } = incoming;
    const wanted = isRecord(message.params?.notifications) ? message.params.notifications : {};
    const wantsTools = wanted.toolsListChanged === true;
    let out: ServerStream | undefined;
    let held: JsonRpcResponseMessage | undefined;
    let listener: ToolListener | undefined;
    const send = (relayed: JsonRpcMessage) => {
      if (out === undefined) {
        // The answer becomes an SSE stream with its first notification (the acknowledgement).
        out = new ServerStream(stream.response, {});
        const timer = setInterval(() => out?.keepAlive(), deps.limits.keepAliveMs);
        timer.unref();
        out.onClose(() => clearInterval(timer));
      }
      out.send(relayed);
    };
    const onMessage = (relayed: JsonRpcMessage | { readonly method: string }) => {
      if (!('method' in relayed)) {
        // An error answer instead of a stream (an upstream that does not listen, say).
        if (out === undefined) held = relayed as JsonRpcResponseMessage;
        return;
      }
      const notification = relayed as JsonRpcMessage & { readonly method: string };
      const current = deps.store.current?.tenants.get(tenant.id) ?? tenant;
      if (current.policy.isMethodBlocked(notification.method)) return;
      if (notification.method === MCP_METHODS.SUBSCRIPTIONS_ACKNOWLEDGED && wantsTools) {
        send(acknowledgedWithTools(notification));
        listener = this.#addToolListener(tenant, agent, server, incoming, notification, send);
        return;
      }
      if (notification.method === MCP_METHODS.TOOLS_LIST_CHANGED && listener !== undefined) {
        // The upstream's own change: its new list is the baseline of the next comparison.
        this.#baseline(listener, tenant, agent, server, incoming);
      }
      send(notification);
    };
    try {
      await upstream.stream(message as never, onMessage);
    } catch (error) {
      const failure = upstreamFailureOf(error);
      if (!failure) throw error;
      if (out === undefined) {
        stream.respond(
          rpcError(message.id, JSONRPC_ERROR_CODES.UPSTREAM_FAILED, failure.code, failure.detail),
        );
        return;
      }
    } finally {
      if (listener !== undefined) this.#toolListeners.delete(listener);
    }
    if (out !== undefined) {
      out.end();
      return;
    }
    if (held !== undefined && this.#answeredLikeSessionEra(server, upstream.status, held)) {
      const bridged = this.#upstream(tenant, agent, server, incoming, undefined, 'session');
      stream.onClose(() => {
        bridged.close().catch(() => {});
      });
      return this.#listen(tenant, agent, server, incoming, bridged);
    }
    stream.respond(
      held ??
        rpcError(
          message.id,
          JSONRPC_ERROR_CODES.UPSTREAM_FAILED,
          'MCP_UPSTREAM_ERROR',
          'the upstream ended the listen stream without a message',
        ),
      held ? upstream.status || 200 : 200,
    );
  }

  #addToolListener(
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    incoming: StatelessIncoming,
    ack: JsonRpcMessage,
    send: (message: JsonRpcMessage) => void,
  ): ToolListener {
    const meta = (ack as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
    const subscriptionId = meta?.[MCP_META_KEYS.SUBSCRIPTION_ID];
    const listener: ToolListener = {
      tenantId: tenant.id,
      agentId: agent.id,
      serverId: server.serverId,
      subscriptionId:
        typeof subscriptionId === 'string' ? subscriptionId : String(incoming.message.id),
      send,
      listed: undefined,
      visible: '',
    };
    this.#toolListeners.add(listener);
    this.#baseline(listener, tenant, agent, server, incoming);
    return listener;
  }

  /** What the agent sees now: the baseline the next snapshot is compared with (an upstream that
   *  cannot be listed leaves the previous one, or none: the gateway then announces nothing). */
  #baseline(
    listener: ToolListener,
    tenant: CompiledTenant,
    agent: CompiledAgent,
    server: CompiledServer,
    incoming: StatelessIncoming,
  ): void {
    // The previous baseline stays until the new one arrives: a snapshot applied meanwhile is
    // still compared with what the agent saw.
    this.#listTools(tenant, agent, server, incoming)
      .then((listed) => {
        if (listed === undefined) return;
        const current = this.#proxy.deps.store.current?.tenants.get(tenant.id) ?? tenant;
        const now = current.agents.get(agent.id) ?? agent;
        const serverNow = current.servers.get(server.serverId) ?? server;
        listener.listed = listed;
        listener.visible = visibleKey(listed, current, now, serverNow);
      })
      .catch((error: unknown) => {
        this.#proxy.deps.logger.debug({ err: error }, 'mcp proxy: listing tools for a listener');
      });
  }

  /** After a snapshot: tells each listener whose visible tools changed. */
  #announceToolChanges(): void {
    const snapshot = this.#proxy.deps.store.current;
    for (const listener of this.#toolListeners) {
      if (listener.listed === undefined) continue;
      const tenant = snapshot?.tenants.get(listener.tenantId as never);
      const agent = tenant?.agents.get(listener.agentId);
      const server = tenant?.servers.get(listener.serverId as never);
      if (!tenant || !agent || !server) continue;
      const visible = visibleKey(listener.listed, tenant, agent, server);
      if (visible === listener.visible) continue;
      listener.visible = visible;
      listener.send({
        jsonrpc: '2.0',
        method: MCP_METHODS.TOOLS_LIST_CHANGED,
        params: { _meta: { [MCP_META_KEYS.SUBSCRIPTION_ID]: listener.subscriptionId } },
      });
    }
  }

  /**
   * True (and remembered) when an upstream answered a stateless request the way a session-era
   * server answers a request without a session.
   */
  #answeredLikeSessionEra(
    server: CompiledServer,
    status: number,
    response: JsonRpcResponseMessage | undefined,
  ): boolean {
    if (!answersLikeSessionEra(status, response)) return false;
    this.#eras.remember(server.serverKey, 'session');
    return true;
  }
}

/** A stateless answer is never resumed (the revision has no Last-Event-ID): its session object
 *  points at one log set that nothing writes to. */
const NO_REPLAY = new ReplayLogs();

/** The session object a stateless call is governed with: it lives for this one request. */
function statelessSession(
  tenant: CompiledTenant,
  agent: CompiledAgent,
  serverId: string,
  upstream: RequestUpstream,
  checked: StatelessRequest,
): ProxySession {
  return {
    id: `stateless-${randomUUID()}`,
    tenantId: tenant.id,
    agentId: agent.id,
    serverId,
    upstream,
    protocolVersion: checked.version,
    clientCapabilities: checked.clientCapabilities,
    inFlight: 0,
    lastUsedMs: Date.now(),
    serverStream: undefined,
    closed: upstream.closing,
    replay: NO_REPLAY,
  };
}

/** The client's headers that travel upstream: the era's own and the tool parameters. */
function forwardedHeaders(headers: IncomingHttpHeaders, method?: string): string[] {
  const forwarded: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const own =
      name === MCP_HEADERS.PROTOCOL_VERSION ||
      (method === undefined &&
        (name === MCP_HEADERS.METHOD ||
          name === MCP_HEADERS.NAME ||
          name.startsWith(MCP_PARAM_HEADER_PREFIX)));
    if (!own || value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) forwarded.push(name, one);
  }
  if (method !== undefined) forwarded.push(MCP_HEADERS.METHOD, method);
  return forwarded;
}

/** server/discover as the gateway answers it for this agent. */
function discovered(
  result: Readonly<Record<string, unknown>>,
  tools: string[] | undefined,
  deps: McpProxyDependencies,
): Record<string, unknown> {
  const meta = isRecord(result._meta) ? result._meta : {};
  const upstreamVersions = Array.isArray(result.supportedVersions) ? result.supportedVersions : [];
  const capabilities = isRecord(result.capabilities) ? result.capabilities : {};
  const toolsCapability = isRecord(capabilities.tools) ? capabilities.tools : undefined;
  return {
    ...result,
    supportedVersions: STATELESS_PROTOCOL_VERSIONS.filter((v) => upstreamVersions.includes(v)),
    // The gateway announces its own list changes on listen streams (a policy change).
    capabilities: toolsCapability
      ? { ...capabilities, tools: { ...toolsCapability, listChanged: true } }
      : capabilities,
    ttlMs: deps.limits.listTtlMs,
    cacheScope: MCP_CACHE_SCOPES.PRIVATE,
    _meta: {
      ...meta,
      [MCP_META_KEYS.SERVER_INFO]: gatewayServerInfo(),
      ...(meta[MCP_META_KEYS.SERVER_INFO] === undefined
        ? {}
        : { [GATEWAY_META_KEYS.UPSTREAM_SERVER_INFO]: meta[MCP_META_KEYS.SERVER_INFO] }),
      ...(tools === undefined ? {} : { [GATEWAY_META_KEYS.TOOLS]: tools }),
    },
  };
}

function acknowledgedWithTools(ack: JsonRpcMessage): JsonRpcMessage {
  const params = isRecord((ack as { params?: unknown }).params)
    ? (ack as { params: Record<string, unknown> }).params
    : {};
  const notifications = isRecord(params.notifications) ? params.notifications : {};
  return {
    ...(ack as object),
    params: { ...params, notifications: { ...notifications, toolsListChanged: true } },
  } as unknown as JsonRpcMessage;
}

/** Tools by name, in code-point order (a nameless entry, which upstreams should not send, last). */
function byName(a: unknown, b: unknown): number {
  const first = isRecord(a) && typeof a.name === 'string' ? a.name : undefined;
  const second = isRecord(b) && typeof b.name === 'string' ? b.name : undefined;
  if (first === second) return 0;
  if (first === undefined) return 1;
  if (second === undefined) return -1;
  return first < second ? -1 : 1;
}

function toolNames(result: unknown): string[] {
  if (!isRecord(result) || !Array.isArray(result.tools)) return [];
  return result.tools.flatMap((tool) =>
    isRecord(tool) && typeof tool.name === 'string' ? [tool.name] : [],
  );
}

/** What the agent sees of a listed result, as one comparable string. */
function visibleKey(
  listed: unknown,
  tenant: CompiledTenant,
  agent: CompiledAgent,
  server: CompiledServer,
): string {
  return JSON.stringify(toolNames(permittedTools(listed, tenant, agent, server)));
}
