// POST /api/v1/mcp/gateway/inspect and GET /api/v1/mcp/gateway/approvals/:id — the data plane's
// hot path (spec §4.1, DESIGN.md §4). The pipeline itself is pure (pipeline.ts); this module does
// the I/O its outcome calls for, in the order the spec demands: a block is durable in the audit
// trail before the answer leaves; a held call is stored before the 202; an allowed call is
// forwarded (production, shadow) or mocked (simulation).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { EVENT_TYPES, type EventBus } from '../../../control-plane/events/types.js';
import type { JsonObject } from '../../../shared/audit/index.js';
import { type ErrorCode, GatewayError } from '../../../shared/errors/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import type { NplDecision } from '../../../shared/npl/index.js';
import type { ExecutionMode } from '../../../shared/snapshot/index.js';
import {
  type ApprovalRecord,
  consumeApproval,
  createApproval,
  findApproval,
} from '../../../storage/approvals.js';
import type { AuditWriter } from '../../../storage/audit-writer.js';
import type { Database } from '../../../storage/database.js';
import type { ExecutionRegistry } from '../../executions.js';
import type { DetectorSignal } from '../../inspection/index.js';
import { type KeyUseListener, requireScope } from '../../plugins/auth.js';
import { errorBodySchema, sendError, toGatewayError } from '../../plugins/errors.js';
import type { GatewayMetrics } from '../../plugins/metrics.js';
import type {
  CompiledAgent,
  CompiledServer,
  CompiledTenant,
} from '../../store/compiled-snapshot.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { type UpstreamClient, UpstreamError } from '../../upstream/index.js';
import {
  type ApprovalView,
  addPolicyFields,
  denyAnswer,
  type InspectAnswer,
  inspectAnswerSchema,
  type ShadowView,
} from './answers.js';
import { ApprovalNotifier } from './approval-notifier.js';
import { callDigest } from './call-digest.js';
import { type PipelineOutcome, runPipeline } from './pipeline.js';
import { type InspectRequest, parseInspectRequest } from './request.js';
import { findPassthroughToken } from './token-passthrough.js';

export interface InspectPluginOptions {
  readonly store: SnapshotStore;
  readonly db: Database;
  readonly audit: AuditWriter;
  readonly upstream: UpstreamClient;
  readonly executions: ExecutionRegistry;
  readonly metrics: GatewayMetrics;
  readonly approvals?: ApprovalNotifier;
  /** Receives `approval.created` for each held call (the approvalQueue subscription). */
  readonly events?: Pick<EventBus, 'publish'>;
  /**
   * Mints the access token a forward carries when the tenant's oauthMode is mcp_as (or
   * NEXUS_REQUIRE_MCP_OAUTH=true). Absent: such forwards fail closed with MCP_OAUTH_UNAVAILABLE.
   */
  readonly mintAccessToken?: (input: {
    tenant: CompiledTenant;
    agent: CompiledAgent;
    server: CompiledServer;
  }) => Promise<string>;
  /** NEXUS_REQUIRE_MCP_OAUTH: every production forward must carry a gateway-minted token. */
  readonly requireMcpOAuth?: boolean;
  /** Longest `wait` of the approval long-poll, in seconds. */
  readonly maxApprovalWaitSeconds?: number;
  /** Notes key uses for `lastUsedAt`. */
  readonly onKeyUse?: KeyUseListener;
}

const INSPECT_PATH = '/api/v1/mcp/gateway/inspect';
const APPROVAL_PATH = '/api/v1/mcp/gateway/approvals/:id';

export async function inspectPlugin(
  app: FastifyInstance,
  options: InspectPluginOptions,
): Promise<void> {
  const { store, db, audit, upstream, executions, metrics } = options;
  const events = options.events ?? null;
  const notifier = options.approvals ?? new ApprovalNotifier();
  const maxWait = options.maxApprovalWaitSeconds ?? 30;

  // Inside this plugin a body that cannot be parsed is a malformed JSON-RPC message (spec step
  // 1), audited like every deny; the tenant is known because authentication ran first.
  app.setErrorHandler(async (error, request, reply) => {
    const mapped = toGatewayError(error as Error);
    if (
      mapped.code !== 'REQUEST_INVALID' ||
      !request.auth ||
      request.routeOptions.url !== INSPECT_PATH
    ) {
      if (mapped.code === 'INTERNAL_ERROR') request.log.error({ err: error }, 'unexpected error');
      // Not a decision: the error body must not go through the route's response schemas, where
      // 403 is an inspect answer (a 403 AUTH_INSUFFICIENT_SCOPE failed serialization: 500).
      reply.serializer(JSON.stringify);
      return sendError(reply, mapped);
    }
    return denyMalformed(reply, request.auth.tenant, randomUUID(), {
      message: 'request body is not valid JSON',
      rpcId: null,
    });
  });

  app.post(
    INSPECT_PATH,
    {
      onRequest: requireScope(store, SCOPES.AGENTS_EXECUTE, options.onKeyUse),
      schema: {
        summary: 'Inspect a tool call and allow, deny or hold it (spec §4.1).',
        body: { type: 'object', additionalProperties: true },
        response: {
          200: inspectAnswerSchema,
          202: inspectAnswerSchema,
          400: inspectAnswerSchema,
          403: inspectAnswerSchema,
          502: inspectAnswerSchema,
          503: inspectAnswerSchema,
          504: inspectAnswerSchema,
          401: errorBodySchema,
          404: inspectAnswerSchema,
          409: inspectAnswerSchema,
        },
      },
      // The body schema above lets everything through: parseInspectRequest decides, so that
      // every malformed body gets the spec's MCP_MALFORMED_RPC instead of a generic 400.
      attachValidation: true,
    },
    async (request, reply) => {
      const { tenant } = request.auth!;
      const inspectionId = randomUUID();
      const parsed = parseInspectRequest(request.body);
      if (!parsed.ok) return denyMalformed(reply, tenant, inspectionId, parsed);
      const call = parsed.value;
      const exchange: Exchange = { reply, tenant, call, inspectionId };
      const blockEarly = (code: ErrorCode, message: string, status: number) =>
        denyNow(exchange, status, { code, message });

      const passthrough = findPassthroughToken(request.headers, call.rpc.params);
      if (passthrough) {
        return blockEarly(
          'MCP_TOKEN_PASSTHROUGH',
          `a bearer token for the MCP server was presented (${passthrough})`,
          400,
        );
      }
      const agent = tenant.agents.get(call.agentId);
      if (!agent) return blockEarly('AGENT_UNKNOWN', `unknown agent ${call.agentId}`, 403);
      if (agent.killed) return blockEarly('AGENT_REVOKED', `agent ${agent.id} is revoked`, 403);
      if (!tenant.policy.allowedModes.has(call.mode)) {
        return blockEarly('EXECUTION_MODE_NOT_ALLOWED', `mode ${call.mode} is not allowed`, 403);
      }
      const server = tenant.servers.get(call.serverId);
      const outcome = runPipeline(tenant, agent, server, call);
      const x: AgentExchange = { reply, tenant, call, inspectionId, agent, server };
      if (call.mode === 'shadow') return shadow(x, outcome);
      if (outcome.kind === 'deny') return denyNow(x, 403, outcome);
      if (outcome.kind === 'require_human') return holdOrRelease(x, outcome.decision);
      return allow(x, outcome, null);
    },
  );

  app.get(
    APPROVAL_PATH,
    {
      onRequest: requireScope(store, SCOPES.AGENTS_EXECUTE, options.onKeyUse),
      schema: {
        summary: 'Read an approval; with ?wait=<seconds> long-poll until it is decided.',
        params: {
          type: 'object',
          properties: { id: { type: 'string', maxLength: 256 } },
          required: ['id'],
        },
        querystring: {
          type: 'object',
          properties: { wait: { type: 'number', minimum: 0, maximum: 3600 } },
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              status: { type: 'string' },
              agentId: { type: 'string' },
              serverId: { type: 'string' },
              toolName: { type: 'string' },
              createdAt: { type: 'string' },
              expiresAt: { type: 'string' },
              decidedAt: { type: ['string', 'null'] },
              decisionReason: { type: ['string', 'null'] },
            },
          },
          404: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { tenant } = request.auth!;
      const { id } = request.params as { id: string };
      const waitSeconds = Math.min((request.query as { wait?: number }).wait ?? 0, maxWait);
      const deadline = Date.now() + waitSeconds * 1000;
      let approval = await findApproval(db, tenant.id, id);
      while (approval?.status === 'pending' && Date.now() < deadline && !request.raw.destroyed) {
        await notifier.wait(id, Math.min(deadline, approval.expiresAt.getTime()) - Date.now());
        approval = await findApproval(db, tenant.id, id);
      }
      if (!approval) {
        return sendError(reply, new GatewayError('APPROVAL_NOT_FOUND', `no approval ${id}`));
      }
      return {
        id: approval.id,
        status: approval.status,
        agentId: approval.agentId,
        serverId: approval.serverId,
        toolName: approval.toolName,
        createdAt: approval.createdAt.toISOString(),
        expiresAt: approval.expiresAt.toISOString(),
        decidedAt: approval.decidedAt?.toISOString() ?? null,
        decisionReason: approval.decisionReason,
      };
    },
  );

  interface Block {
    readonly code: ErrorCode;
    readonly message: string;
    readonly signal?: DetectorSignal;
    readonly decision?: NplDecision;
  }

  /** One inspect call on its way through the route: what every step below works with. */
  interface Exchange {
    readonly reply: FastifyReply;
    readonly tenant: CompiledTenant;
    readonly call: InspectRequest;
    readonly inspectionId: string;
  }

  /** An exchange whose agent is known and may act. */
  interface AgentExchange extends Exchange {
    readonly agent: CompiledAgent;
    readonly server: CompiledServer | undefined;
  }

  async function denyNow(x: Exchange, status: number, block: Block): Promise<FastifyReply> {
    const { reply, tenant, call, inspectionId } = x;
    const auditId = await auditDeny(tenant, call, inspectionId, call.mode, block);
    return finish(
      reply,
      status,
      denyAnswer({
        inspectionId,
        mode: call.mode,
        rpcId: call.rpc.id,
        code: block.code,
        message: block.message,
        auditId,
        signal: block.signal,
        decision: block.decision,
      }),
    );
  }

  /** A body that is not an inspect request: audited, answered 400 MCP_MALFORMED_RPC. */
  async function denyMalformed(
    reply: FastifyReply,
    tenant: CompiledTenant,
    inspectionId: string,
    problem: { message: string; rpcId: string | number | null },
  ): Promise<FastifyReply> {
    const code = 'MCP_MALFORMED_RPC';
    const auditId = await auditDeny(tenant, undefined, inspectionId, null, {
      code,
      message: problem.message,
    });
    return finish(
      reply,
      400,
      denyAnswer({
        inspectionId,
        mode: null,
        rpcId: problem.rpcId,
        code,
        message: problem.message,
        auditId,
      }),
    );
  }

  /** Appends the deny to the audit trail and resolves once it is durable. */
  async function auditDeny(
    tenant: CompiledTenant,
    call: InspectRequest | undefined,
    inspectionId: string,
    mode: ExecutionMode | null,
    block: Block,
    action = 'inspect.deny',
  ): Promise<string> {
    const metadata: JsonObject = {
      actorType: 'agent',
      decision: 'deny',
      reasonCode: block.code,
      message: block.message,
      inspectionId,
    };
    if (mode) metadata.mode = mode;
    if (call) {
      metadata.tool = call.toolName;
      metadata.method = call.rpc.method;
      metadata.serverId = call.serverId;
      metadata.executionId = call.executionId;
    }
    if (block.signal) metadata.signal = { ...block.signal };
    if (block.decision) {
      metadata.ruleId = block.decision.ruleId;
      metadata.policy = block.decision.policyUri;
      metadata.alertSeverity = block.decision.alertSeverity;
    }
    const entry = await audit.append({
      tenantId: tenant.id,
      action,
      resourceType: 'agent',
      resourceId: call?.agentId ?? 'unknown',
      metadata,
    });
    return entry.id;
  }

  async function holdOrRelease(x: AgentExchange, decision: NplDecision): Promise<FastifyReply> {
    const { reply, tenant, agent, call, inspectionId } = x;
    const digest = callDigest({
      tenantId: tenant.id,
      agentId: agent.id,
      serverId: call.serverId,
      toolName: call.toolName,
      arguments: call.rpc.arguments,
    });
    if (call.approvalId !== undefined) {
      const outcome = await consumeApproval(db, {
        tenantId: tenant.id,
        agentId: agent.id,
        id: call.approvalId,
        callDigest: digest,
      });
      if (!outcome.ok) {
        const status = outcome.code === 'APPROVAL_NOT_FOUND' ? 404 : 403;
        return denyNow(x, status, {
          code: outcome.code,
          message: approvalMessage(outcome.code, call.approvalId),
          decision,
        });
      }
      await audit.append({
        tenantId: tenant.id,
        action: 'approval.used',
        resourceType: 'approval',
        resourceId: outcome.approval.id,
        metadata: { actorType: 'agent', tool: call.toolName, inspectionId, agentId: agent.id },
      });
      return allow(x, ALLOWED, decision);
    }
    const approval = await createApproval(db, {
      tenantId: tenant.id,
      agentId: agent.id,
      executionId: call.executionId,
      serverId: call.serverId,
      toolName: call.toolName,
      method: call.rpc.method,
      callDigest: digest,
      arguments: call.rpc.arguments,
      policyUri: decision.policyUri || null,
      ruleId: decision.ruleId,
      reason: decision.reason,
      ttlMs: tenant.policy.approvalTtlMs,
    });
    events?.publish({
      type: EVENT_TYPES.APPROVAL_CREATED,
      tenantId: tenant.id,
      approval: { id: approval.id, agentId: agent.id, status: approval.status },
    });
    const auditEntry = await audit.append({
      tenantId: tenant.id,
      action: 'approval.requested',
      resourceType: 'approval',
      resourceId: approval.id,
      metadata: {
        actorType: 'agent',
        tool: call.toolName,
        agentId: agent.id,
        serverId: call.serverId,
        inspectionId,
        ruleId: decision.ruleId,
        policy: decision.policyUri,
        expiresAt: approval.expiresAt.toISOString(),
      },
    });
    const answer: InspectAnswer = {
      decision: 'require_human_approval',
      reasonCode: 'NPL_REQUIRE_HUMAN',
      inspectionId,
      executionMode: call.mode,
      enforced: true,
      message: decision.reason,
      auditId: auditEntry.id,
      approval: approvalView(approval),
    };
    addPolicyFields(answer, decision);
    return finish(reply, 202, answer);
  }

  async function allow(
    x: AgentExchange,
    outcome: Extract<PipelineOutcome, { kind: 'allow' }>,
    approvedDecision: NplDecision | null,
    shadowView?: ShadowView,
  ): Promise<FastifyReply> {
    const { reply, server, call, inspectionId } = x;
    const answer: InspectAnswer = {
      decision: 'allow',
      reasonCode: null,
      inspectionId,
      executionMode: call.mode,
      enforced: shadowView === undefined,
    };
    const decision = approvedDecision ?? outcome.decision;
    if (decision) addPolicyFields(answer, decision);
    if (shadowView) answer.shadow = shadowView;
    if (call.mode === 'simulation' || outcome.simulate) {
      answer.simulated = true;
      answer.response = { jsonrpc: '2.0', id: call.rpc.id, result: simulatedResult(server, call) };
      return finish(reply, 200, answer);
    }
    return forward(x, answer);
  }

  async function forward(x: AgentExchange, answer: InspectAnswer): Promise<FastifyReply> {
    const { reply, tenant, agent, server, call } = x;
    if (!server) {
      // Shadow mode forwards calls to servers that are not whitelisted too: say only what is true.
      const whitelisted = tenant.policy.trustedServers.has(call.serverId);
      return upstreamFailure(
        x,
        answer,
        'MCP_SERVER_NOT_REGISTERED',
        404,
        `server ${call.serverId} is ${whitelisted ? 'whitelisted but ' : ''}not registered`,
      );
    }
    let accessToken: string | undefined;
    if (tenant.policy.oauthMode === 'mcp_as' || options.requireMcpOAuth) {
      if (!options.mintAccessToken) {
        return upstreamFailure(
          x,
          answer,
          'MCP_OAUTH_UNAVAILABLE',
          503,
          'the tenant requires gateway-minted access tokens and no token issuer is configured',
        );
      }
      accessToken = await options.mintAccessToken({ tenant, agent, server });
    }
    const execution = executions.begin(agent.id);
    const started = performance.now();
    try {
      const result = await upstream.forward({
        target: { serverKey: server.serverKey, url: server.url },
        sessionKey: `${tenant.id}/${agent.id}/${server.serverId}`,
        message: {
          jsonrpc: '2.0',
          id: call.rpc.id,
          method: call.rpc.method,
          params: call.rpc.params,
        },
        signal: execution.signal,
        ...(accessToken === undefined ? {} : { accessToken }),
      });
      metrics.upstreamDuration.observe({ outcome: 'ok' }, (performance.now() - started) / 1000);
      answer.response = result.response;
      return finish(reply, 200, answer);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      metrics.upstreamDuration.observe(
        { outcome: error.code },
        (performance.now() - started) / 1000,
      );
      const status =
        error.code === 'MCP_UPSTREAM_TIMEOUT'
          ? 504
          : error.code === 'MCP_UPSTREAM_ABORTED'
            ? 409
            : 502;
      return upstreamFailure(x, answer, error.code, status, error.detail);
    } finally {
      execution.end();
    }
  }

  function upstreamFailure(
    x: Exchange,
    answer: InspectAnswer,
    code: ErrorCode,
    status: number,
    message: string,
  ): FastifyReply {
    answer.reasonCode = code;
    answer.message = message;
    answer.response = {
      jsonrpc: '2.0',
      id: x.call.rpc.id,
      error: { code: -32002, message, data: { reasonCode: code } },
    };
    return finish(x.reply, status, answer);
  }

  async function shadow(x: AgentExchange, outcome: PipelineOutcome): Promise<FastifyReply> {
    const { tenant, call, inspectionId } = x;
    if (outcome.kind === 'allow') {
      const view: ShadowView = { decision: 'allow', reasonCode: null };
      if (outcome.decision) addPolicyFields(view, outcome.decision);
      // Shadow enforces nothing: a SIMULATE decision is reported, the call is still forwarded.
      return allow(x, FORWARD, null, view);
    }
    const code: ErrorCode = outcome.kind === 'deny' ? outcome.code : 'NPL_REQUIRE_HUMAN';
    const message = outcome.kind === 'deny' ? outcome.message : outcome.decision.reason;
    const block: Block =
      outcome.kind === 'deny' ? outcome : { code, message, decision: outcome.decision };
    const auditId = await auditDeny(
      tenant,
      call,
      inspectionId,
      call.mode,
      block,
      'inspect.shadow_block',
    );
    const view: ShadowView = {
      decision: outcome.kind === 'deny' ? 'deny' : 'require_human_approval',
      reasonCode: code,
      auditId,
    };
    if (block.signal) view.signal = block.signal;
    if (block.decision) addPolicyFields(view, block.decision);
    return allow(x, FORWARD, null, view);
  }

  function finish(reply: FastifyReply, status: number, answer: InspectAnswer): FastifyReply {
    metrics.inspectDuration.observe(
      {
        decision: answer.decision,
        reason_code: answer.reasonCode ?? 'none',
        mode: answer.executionMode ?? 'none',
      },
      reply.elapsedTime / 1000,
    );
    return reply.code(status).send(answer);
  }
}

const ALLOWED: Extract<PipelineOutcome, { kind: 'allow' }> = Object.freeze({
  kind: 'allow',
  simulate: false,
  decision: null,
});
const FORWARD = ALLOWED;

function approvalView(approval: ApprovalRecord): ApprovalView {
  return {
    id: approval.id,
    status: approval.status,
    expiresAt: approval.expiresAt.toISOString(),
  };
}

function approvalMessage(code: ErrorCode, id: string): string {
  switch (code) {
    case 'APPROVAL_PENDING':
      return `approval ${id} is still pending`;
    case 'APPROVAL_REJECTED':
      return `approval ${id} was rejected`;
    case 'APPROVAL_EXPIRED':
      return `approval ${id} has expired`;
    case 'APPROVAL_MISMATCH':
      return `approval ${id} was granted for a different call`;
    case 'APPROVAL_ALREADY_USED':
      return `approval ${id} has already been used`;
    default:
      return `no approval ${id} for this agent`;
  }
}

/** The tenant's registered mock result for the tool, or a generic one marked as simulated. */
function simulatedResult(server: CompiledServer | undefined, call: InspectRequest): unknown {
  const mock = server?.mockResults.get(call.toolName);
  if (mock !== undefined) return mock;
  return {
    content: [{ type: 'text', text: `[simulated] ${call.toolName} was not executed` }],
    isError: false,
    _meta: { simulated: true },
  };
}
