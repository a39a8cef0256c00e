// tools/call through the proxy: the same governance as POST /api/v1/mcp/gateway/inspect (one
// implementation: screenCall + governKnownAgent), with an outlet that speaks MCP.
// - deny: the audited decision becomes a JSON-RPC error on HTTP 200 (rpc-errors.ts);
// - allow, production or shadow: forwarded over the client's own upstream session; what the
//   upstream sends on the call's stream before the result (progress, log messages, sampling and
//   elicitation requests) is relayed on the client's stream for this call (relay.ts);
// - simulation: the tenant's mock result;
// - held for a human, on a stateless request (2026-07-28): answered at once, on the protocol's
//   own wire (call-rounds.ts: an InputRequiredResult sending the user to the approval's page, or
//   -32021); the client's retry names the approval, and an approved one passes once;
// - held for a human, on a session: the call stays open. The client is told which approval
//   holds it and its console page (a progress notification when it sent a progressToken, else a
//   log message; and, to a client that declared URL-mode elicitation, an `elicitation/create` in
//   mode url to the page, completed by `notifications/elicitation/complete` once decided),
//   the proxy waits for the decision (bounded by the tenant's approvalWaitSeconds) and then runs
//   the call through governance again with the approval: approved → it passes once and is
//   forwarded; rejected or expired → the audited deny. A wait that ends first (or that a stopping
//   gateway ends) answers APPROVAL_PENDING with the approvalId; retrying the same call, on this
//   process or after a restart, resumes that approval (it is found by the call's digest).
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { type ErrorCode, formatErrorMessage } from '../../shared/errors/index.js';
import { type ApprovalId, asApprovalId, type ServerId, type TenantId } from '../../shared/ids.js';
import { isRecord } from '../../shared/json/is-record.js';
import {
  GATEWAY_REQUEST_ID_PREFIX,
  JSONRPC_ERROR_CODES,
  MCP_METHODS,
} from '../../shared/mcp/protocol.js';
import type { ExecutionMode } from '../../shared/snapshot/index.js';
import { waitForApprovalDecision } from '../approval-wait.js';
import type { InspectAnswer } from '../governance/answers.js';
import { answerDeny, answerMalformed } from '../governance/deny.js';
import type { AgentExchange, DecisionOutlet, Exchange } from '../governance/exchange.js';
import { sendAnswer } from '../governance/exchange.js';
import { governKnownAgent, isBlock, screenCall } from '../governance/govern.js';
import { NO_DELEGATION } from '../governance/identity.js';
import { type InspectRequest, MODES } from '../governance/request.js';
import type { CompiledAgent, CompiledTenant } from '../store/compiled-snapshot.js';
import { approvalPageUrl, type CallRounds, declaresUrlElicitation } from './call-rounds.js';
import type { McpProxyDependencies } from './dependencies.js';
import { relayServerMessage } from './relay.js';
import { responseOf, rpcError, upstreamFailureOf } from './rpc-errors.js';
import type { ProxySession } from './sessions.js';
import type { JsonRpcRequestMessage } from './transport/messages.js';
import type { CallStream } from './transport/response-stream.js';

export interface ToolCallContext {
  readonly deps: McpProxyDependencies;
  readonly session: ProxySession;
  readonly tenant: CompiledTenant;
  readonly message: JsonRpcRequestMessage;
  readonly stream: CallStream;
  readonly headers: IncomingHttpHeaders;
  /** MCP-Protocol-Version of this request (an older supported one is relayed as sent). */
  readonly protocolVersion: string;
  /** Aborted when the server starts closing: a held call stops waiting and answers pending. */
  readonly stopping: AbortSignal;
  /** The HTTP status an upstream's own JSON-RPC error is relayed with (stateless era: the
   *  upstream's, e.g. 400 with -32021); default 200. */
  readonly upstreamErrorStatus?: () => number;
  /** Stateless era: a held call is answered at once on the wire, and an upstream's
   *  InputRequiredResult has its requestState wrapped (call-rounds.ts). */
  readonly rounds?: CallRounds;
  /** The approval the call is resubmitted with (a stateless client's retry of a held call). */
  readonly approvalId?: ApprovalId;
}

/** Runs the call to its end: resolves once its response is on the client's stream. */
export async function proxyToolCall(ctx: ToolCallContext): Promise<void> {
  const outlet = new ProxyOutlet(ctx);
  const first = buildCall(ctx, ctx.approvalId, ctx.approvalId === undefined);
  const exchange: Exchange = {
    outlet,
    tenant: ctx.tenant,
    call: first,
    inspectionId: randomUUID(),
  };
  await govern(ctx.deps, exchange, ctx.headers, ctx.message);
  await outlet.finished;
}

async function govern(
  deps: McpProxyDependencies,
  exchange: Exchange,
  headers: IncomingHttpHeaders,
  message: JsonRpcRequestMessage,
): Promise<void> {
  const params = message.params;
  if (typeof params?.name !== 'string' || params.name === '') {
    return answerMalformed(deps, exchange.outlet, exchange.tenant, exchange.inspectionId, {
      message: 'tools/call needs params.name (the tool)',
      rpcId: message.id,
    });
  }
  // The transport has bounded params as inspect bounds its request.params (MAX_DEPTH levels).
  const screened = screenCall(exchange, headers);
  if (isBlock(screened)) return answerDeny(deps, exchange, screened);
  return governKnownAgent(deps, exchange, screened, NO_DELEGATION);
}

/** The execution mode: an allowed X-Execution-Mode header, else the agent's, else the tenant's. */
function proxyModeOf(
  tenant: CompiledTenant,
  agent: CompiledAgent | undefined,
  headers: IncomingHttpHeaders,
): ExecutionMode {
  const header = headers['x-execution-mode'];
  if (tenant.policy.proxyModeHeader && typeof header === 'string' && MODES.has(header)) {
    return header as ExecutionMode;
  }
  return agent?.executionMode ?? tenant.policy.proxyExecutionMode;
}

function buildCall(
  ctx: ToolCallContext,
  approvalId: ApprovalId | undefined,
  resume: boolean,
): InspectRequest {
  const { session, message, tenant } = ctx;
  const params = message.params ?? {};
  const args = params.arguments;
  return {
    agentId: session.agentId,
    executionId: `mcp:${session.id}:${String(message.id)}`,
    serverId: session.serverId as ServerId,
    toolName: typeof params.name === 'string' ? params.name : '',
    mode: proxyModeOf(tenant, tenant.agents.get(session.agentId), ctx.headers),
    rpc: {
      jsonrpc: '2.0',
      id: message.id,
      method: message.method,
      params,
      arguments: isRecord(args) ? args : {},
    },
    policy: undefined,
    approvalId,
    agentCredential: undefined,
    delegationChain: undefined,
    forward: true,
    resumeOpenApproval: resume || undefined,
  };
}

/** The proxy's outlet: answers become JSON-RPC messages; held calls wait; forwards relay. */
class ProxyOutlet implements DecisionOutlet {
  readonly #ctx: ToolCallContext;
  /**
   * When the decision being made started: the call's arrival, then the end of its approval wait,
   * so a decision's duration is the gateway's own time, never the human's.
   */
  #started = performance.now();
  #resolve!: () => void;
  readonly finished = new Promise<void>((resolve) => {
    this.#resolve = resolve;
  });
  /** The approval this call already waited for (a second hold answer is the resumed one). */
  #waited: ApprovalId | undefined;

  constructor(ctx: ToolCallContext) {
    this.#ctx = ctx;
  }

  elapsedSeconds(): number {
    return (performance.now() - this.#started) / 1000;
  }

  deliver(answer: InspectAnswer, _status: number): void {
    if (answer.decision === 'require_human_approval' && answer.approval) {
      const rounds = this.#ctx.rounds;
      if (rounds === undefined) {
        this.#waitForApproval(answer).catch((error: unknown) => this.#fail(error));
        return;
      }
      const approvalId = asApprovalId(answer.approval.id);
      if (answer.approval.status === 'approved' && this.#waited !== approvalId) {
        // The open approval this call resumed (a retry without requestState) is approved
        // already: the call goes through governance again with it, once.
        this.#waited = approvalId;
        this.#governWith(approvalId).catch((error: unknown) => this.#fail(error));
        return;
      }
      const { response, status } = rounds.held(
        answer.approval,
        answer.reasonCode ?? 'APPROVAL_PENDING',
        answer.message,
      );
      this.#respond(response, status);
      return;
    }
    const response = responseOf(this.#ctx.message.id, answer);
    const upstreamError = answer.reasonCode === null && response.error !== undefined;
    this.#respond(response, upstreamError ? (this.#ctx.upstreamErrorStatus?.() ?? 200) : 200);
  }

  async forward(exchange: AgentExchange, answer: InspectAnswer): Promise<void> {
    const { deps, session, message, stream } = this.#ctx;
    // Aborted by the kill switch; a closed session aborts its upstream calls itself. A client that
    // goes away does not cancel the call (MCP: a disconnection is not a cancellation; a client
    // cancels with notifications/cancelled, which reaches the upstream).
    const execution = deps.executions.begin(exchange.agent.id);
    const started = performance.now();
    try {
      const response = await session.upstream.request(message as never, {
        signal: execution.signal,
        protocolVersion: this.#ctx.protocolVersion,
        onMessage: (relayed) => relayServerMessage(deps, session, exchange.tenant, relayed, stream),
      });
      deps.metrics.upstreamDuration.observe(
        { outcome: 'ok' },
        (performance.now() - started) / 1000,
      );
      answer.response = this.#ctx.rounds?.forwarded(response as never) ?? response;
      sendAnswer(deps, exchange, answer);
    } catch (error) {
      const failure = upstreamFailureOf(error);
      if (!failure) throw error;
      deps.metrics.upstreamDuration.observe(
        { outcome: failure.code },
        (performance.now() - started) / 1000,
      );
      answer.reasonCode = failure.code as ErrorCode;
      answer.message =
        failure.code === 'MCP_UPSTREAM_ABORTED' && execution.signal.reason instanceof Error
          ? `the forward was aborted: ${execution.signal.reason.message}`
          : failure.detail;
      answer.response = undefined;
      sendAnswer(deps, exchange, answer);
    } finally {
      execution.end();
    }
  }

  #respond(response: ReturnType<typeof responseOf>, status = 200): void {
    this.#ctx.stream.respond(response, status);
    this.#resolve();
  }

  #fail(error: unknown): void {
    this.#ctx.deps.logger.info({ err: error }, 'mcp proxy: a held call failed');
    this.#respond(
      rpcError(
        this.#ctx.message.id,
        JSONRPC_ERROR_CODES.INTERNAL_ERROR,
        'INTERNAL_ERROR',
        'the held call failed',
      ),
    );
  }

  async #waitForApproval(held: InspectAnswer): Promise<void> {
    const { deps, session, tenant, stream } = this.#ctx;
    const approval = held.approval!;
    const approvalId = asApprovalId(approval.id);
    if (this.#waited === approvalId) {
      // Governance held the call again with the approval it waited for: still not decided.
      return this.#pending(approvalId);
    }
    this.#waited = approvalId;
    const page = approvalPageUrl(deps.publicUrl.get(), approvalId);
    const heldFor = `held for approval ${approvalId}: ${held.message ?? 'a policy requires a human'}`;
    this.#tell(
      `${heldFor}. An operator decides it at ${page} (or with approveApproval or rejectApproval, GraphQL ${deps.publicUrl.get()}/graphql); waiting up to ${Math.round(tenant.policy.approvalWaitMs / 1000)} s.`,
      {
        approvalId,
        url: page,
        ruleId: held.ruleId,
        policy: held.policy,
        expiresAt: approval.expiresAt,
      },
    );
    // A client that declared URL-mode elicitation (2025-11-25) is also asked to show the page.
    const elicited = declaresUrlElicitation(session.clientCapabilities);
    if (elicited) {
      stream.send({
        jsonrpc: '2.0',
        id: `${GATEWAY_REQUEST_ID_PREFIX}${randomUUID()}`,
        method: MCP_METHODS.ELICITATION_CREATE,
        params: {
          mode: 'url',
          elicitationId: approvalId,
          message: `${heldFor}. Open the page to see the call; an operator approves or rejects it there.`,
          url: page,
        },
      });
    }
    // The held call is one of the agent's executions: a kill wakes it and counts it.
    const execution = deps.executions.begin(session.agentId);
    let status: string;
    try {
      status = await waitForDecision(
        deps,
        tenant.id,
        approvalId,
        tenant.policy.approvalWaitMs,
        AbortSignal.any([
          session.closed.signal,
          closedSignal(stream),
          execution.signal,
          this.#ctx.stopping,
        ]),
        () => stream.keepAlive(),
      );
    } finally {
      execution.end();
    }
    this.#started = performance.now();
    const current = deps.store.current?.tenants.get(tenant.id) ?? tenant;
    // Killed while held: governance again answers the audited AGENT_REVOKED, not the rejection
    // the kill wrote on the approval (nor APPROVAL_PENDING for the wait it cut short).
    const killed = execution.signal.aborted || current.agents.get(session.agentId)?.killed === true;
    if (!killed) {
      if (stream.closed) return this.#resolve();
      if (status === 'pending' && this.#ctx.stopping.aborted) {
        return this.#pending(
          approvalId,
          'the gateway is stopping; retry the same call once it is back to keep waiting',
        );
      }
      if (status === 'pending') return this.#pending(approvalId);
      this.#tell(`approval ${approvalId} is ${status}`, { approvalId, status });
      if (elicited) {
        stream.send({
          jsonrpc: '2.0',
          method: MCP_METHODS.ELICITATION_COMPLETE,
          params: { elicitationId: approvalId },
        });
      }
    }
    // Decided: the call goes through governance again, now with its approval.
    await this.#governWith(approvalId);
  }

  async #governWith(approvalId: ApprovalId): Promise<void> {
    const { deps, tenant, message } = this.#ctx;
    this.#started = performance.now();
    const current = deps.store.current?.tenants.get(tenant.id) ?? tenant;
    const again: Exchange = {
      outlet: this,
      tenant: current,
      call: buildCall({ ...this.#ctx, tenant: current }, approvalId, false),
      inspectionId: randomUUID(),
    };
    await govern(deps, again, this.#ctx.headers, message);
  }

  #pending(approvalId: ApprovalId, next = 'retry the same call to keep waiting'): void {
    this.#respond(
      rpcError(
        this.#ctx.message.id,
        JSONRPC_ERROR_CODES.GATEWAY_DENIED,
        'APPROVAL_PENDING',
        `${formatErrorMessage('APPROVAL_PENDING', { approvalId })}; ${next}`,
        { approvalId },
      ),
    );
  }

  /** Progress on the call's stream: a progress notification if asked for, else a log message. */
  #tell(text: string, data: Record<string, unknown>): void {
    const { message, stream } = this.#ctx;
    const meta = message.params?._meta as { progressToken?: unknown } | undefined;
    const token = meta?.progressToken;
    if (typeof token === 'string' || typeof token === 'number') {
      this.#progress += 1;
      stream.send({
        jsonrpc: '2.0',
        method: MCP_METHODS.PROGRESS,
        params: { progressToken: token, progress: this.#progress, message: text },
      });
      return;
    }
    stream.send({
      jsonrpc: '2.0',
      method: MCP_METHODS.MESSAGE,
      params: { level: 'notice', logger: 'agent-gateway', data: { message: text, ...data } },
    });
  }

  #progress = 0;
}

function closedSignal(stream: CallStream): AbortSignal {
  const controller = new AbortController();
  stream.onClose(() => controller.abort());
  return controller.signal;
}

/** Waits for the decision (approval-wait.ts), keeping the client's stream alive meanwhile. */
async function waitForDecision(
  deps: McpProxyDependencies,
  tenantId: TenantId,
  id: ApprovalId,
  waitMs: number,
  stop: AbortSignal,
  keepAlive: () => void,
): Promise<string> {
  const timer = setInterval(keepAlive, deps.limits.keepAliveMs);
  timer.unref();
  try {
    const approval = await waitForApprovalDecision(
      { db: deps.db, events: deps.approvalEvents, metrics: deps.metrics },
      tenantId,
      id,
      waitMs,
      stop,
      'mcp_proxy',
    );
    return approval?.status ?? 'expired';
  } finally {
    clearInterval(timer);
  }
}
