// GET /api/v1/mcp/gateway/approvals/{id}?wait=<s> — an agent reads the approval of a held call;
// with `wait` it long-polls until the approval is decided, expires, the wait ends or the client
// goes away. The poll subscribes to `approval.resolved` on the event bus before it reads, so a
// decision made in any process sharing the bus (the control plane, another gateway) wakes it at
// once; it re-reads the row only when woken, never on a timer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { gatewayError } from '../../../shared/errors/index.js';
import type { EventBus } from '../../../shared/events/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { type ApprovalId, asApprovalId, type TenantId } from '../../../shared/ids.js';
import { type ApprovalRecord, findApproval } from '../../../storage/approvals.js';
import type { Database } from '../../../storage/database.js';
import { waitForApprovalDecision } from '../../approval-wait.js';
import { type KeyUseListener, requireScope } from '../../plugins/auth.js';
import { errorBodySchema, sendError } from '../../plugins/errors.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';

export const APPROVAL_PATH = '/api/v1/mcp/gateway/approvals/:id';

export interface ApprovalRoutesDependencies {
  readonly store: SnapshotStore;
  readonly db: Database;
  readonly events: Pick<EventBus, 'subscribe'>;
  /** Longest `wait` of the long-poll, in seconds (default 30). */
  readonly maxWaitSeconds?: number | undefined;
  readonly onKeyUse?: KeyUseListener | undefined;
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
      onRequest: requireScope(deps.store, SCOPES.AGENTS_EXECUTE, deps.onKeyUse),
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
        response: { 200: approvalSchema, 404: errorBodySchema },
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
  const approval =
    waitSeconds > 0
      ? await waitForDecision(deps, tenant.id, id, waitSeconds, reply, closing)
      : await findApproval(deps.db, tenant.id, id);
  // The server stopped accepting connections before this answer: without `close`, the client's
  // keep-alive socket would hold the shutdown until its idle timeout.
  if (closing.aborted) reply.header('connection', 'close');
  if (!approval) {
    return sendError(reply, gatewayError('APPROVAL_NOT_FOUND', { approvalId: id }));
  }
  return approvalView(approval);
}

/**
 * Reads the approval until it is no longer pending, it expires, the wait ends, the client leaves
 * or the server closes.
 */
async function waitForDecision(
  deps: ApprovalRoutesDependencies,
  tenantId: TenantId,
  id: ApprovalId,
  waitSeconds: number,
  reply: FastifyReply,
  closing: AbortSignal,
): Promise<ApprovalRecord | undefined> {
  const clientGone = new AbortController();
  const onClose = () => clientGone.abort();
  reply.raw.once('close', onClose);
  try {
    return await waitForApprovalDecision(
      deps,
      tenantId,
      id,
      waitSeconds * 1000,
      AbortSignal.any([clientGone.signal, closing]),
    );
  } finally {
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
