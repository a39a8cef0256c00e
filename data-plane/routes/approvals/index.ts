// GET /api/v1/mcp/gateway/approvals/{id}?wait=<s> — an agent reads the approval of a held call;
// with `wait` it long-polls until the approval is decided, expires, the wait ends or the client
// goes away. The poll subscribes to `approval.resolved` on the event bus before it reads, so a
// decision made in any process sharing the bus (the control plane, another gateway) wakes it at
// once; it re-reads the row only when woken, never on a timer.
//
// A killed agent's approvals answer 403 AGENT_REVOKED (audited as a bounded refusal), not the
// `rejected` the kill wrote: the poller is told why its call will never run, in the same words as
// every other refusal of the agent. A long-poll in progress counts as one of the agent's
// executions, so the kill wakes it at once and its `abortedExecutions` counts it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { errorBodySchema, sendError } from '../../../http-edge/errors.js';
import { markRefusal } from '../../../shared/audit/index.js';
import { gatewayError } from '../../../shared/errors/index.js';
import type { EventBus } from '../../../shared/events/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { asApprovalId, type TenantId } from '../../../shared/ids.js';
import type { Database } from '../../../storage/engine/database.js';
import { type ApprovalRecord, findApproval } from '../../../storage/tables/approvals.js';
import { waitForApprovalDecision } from '../../approval-wait.js';
import type { ExecutionRegistry } from '../../executions.js';
import type { GatewayMetrics } from '../../metrics/gateway-metrics.js';
import { refusedAgent } from '../../refusal-subjects.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';

export const APPROVAL_PATH = '/api/v1/mcp/gateway/approvals/:id';

export interface ApprovalRoutesDependencies {
  readonly store: SnapshotStore;
  readonly db: Database;
  /** `approval.resolved` wakes a long-poll; `approval.waiting` is published while it waits. */
  readonly events: Pick<EventBus, 'subscribe' | 'publish'>;
  /** agent_gateway_approval_wait_seconds{source="long_poll"}. */
  readonly metrics: Pick<GatewayMetrics, 'approvalWait'>;
  /** The kill switch's registry: a long-poll is one of the agent's executions. */
  readonly executions?: Pick<ExecutionRegistry, 'begin'> | undefined;
  /** Longest `wait` of the long-poll, in seconds (default 30). */
  readonly maxWaitSeconds?: number | undefined;
}

const approvalSchema = {
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
} as const;

export const approvalRoutes = fastifyPlugin(registerApprovalRoute, {
  name: 'agent-gateway-approvals',
  dependencies: ['agent-gateway-errors', 'agent-gateway-auth'],
  encapsulate: true,
});

async function registerApprovalRoute(
  app: FastifyInstance,
  deps: ApprovalRoutesDependencies,
): Promise<void> {
  // A closing server waits for requests in flight: long-polls answer their current state at once
  // instead of holding the shutdown for up to their whole wait.
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());
  app.get(
    APPROVAL_PATH,
    {
      onRequest: app.requireScope(SCOPES.AGENTS_EXECUTE),
      config: { docs: 'docs/inspect.md#approvals' },
      schema: {
        operationId: 'getApproval',
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
        response: { 200: approvalSchema, 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    (request, reply) => readApproval(deps, closing.signal, request, reply),
  );
}

async function readApproval(
  deps: ApprovalRoutesDependencies,
  closing: AbortSignal,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | ReturnType<typeof approvalView>> {
  const { tenant } = request.auth!;
  const id = asApprovalId((request.params as { id: string }).id);
  const waitSeconds = Math.min(
    (request.query as { wait?: number }).wait ?? 0,
    deps.maxWaitSeconds ?? 30,
  );
  let approval = await findApproval(deps.db, tenant.id, id);
  if (approval && isKilled(deps, tenant.id, approval)) throw agentRevoked(tenant.id, approval);
  if (approval && waitSeconds > 0) {
    approval = await waitForDecision(deps, approval, waitSeconds, reply, closing);
    if (approval && isKilled(deps, tenant.id, approval)) throw agentRevoked(tenant.id, approval);
  }
  // The server stopped accepting connections before this answer: without `close`, the client's
  // keep-alive socket would hold the shutdown until its idle timeout.
  if (closing.aborted) reply.header('connection', 'close');
  if (!approval) {
    return sendError(reply, gatewayError('APPROVAL_NOT_FOUND', { approvalId: id }));
  }
  return approvalView(approval);
}

/** Whether the approval's agent is killed (the store's kill overlay, applied at the kill). */
function isKilled(
  deps: ApprovalRoutesDependencies,
  tenantId: TenantId,
  approval: ApprovalRecord,
): boolean {
  return deps.store.current?.tenants.get(tenantId)?.agents.get(approval.agentId)?.killed === true;
}

/** 403 AGENT_REVOKED, marked for the edge's bounded refusal audit under the agent. */
function agentRevoked(tenantId: TenantId, approval: ApprovalRecord) {
  return markRefusal(
    gatewayError('AGENT_REVOKED', { agentId: approval.agentId }),
    refusedAgent({ tenantId, agentId: approval.agentId }),
  );
}

/**
 * Reads the approval until it is no longer pending, it expires, the wait ends, the client leaves,
 * the server closes or the agent is killed.
 */
async function waitForDecision(
  deps: ApprovalRoutesDependencies,
  approval: ApprovalRecord,
  waitSeconds: number,
  reply: FastifyReply,
  closing: AbortSignal,
): Promise<ApprovalRecord | undefined> {
  const clientGone = new AbortController();
  const onClose = () => clientGone.abort();
  reply.raw.once('close', onClose);
  const execution = deps.executions?.begin(approval.agentId);
  try {
    return await waitForApprovalDecision(
      deps,
      approval.tenantId,
      approval.id,
      waitSeconds * 1000,
      AbortSignal.any([clientGone.signal, closing, ...(execution ? [execution.signal] : [])]),
      'long_poll',
    );
  } finally {
    execution?.end();
    reply.raw.off('close', onClose);
  }
}

function approvalView(approval: ApprovalRecord) {
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
}
