// What every mutation does after its write: record the operator's action in the audit trail and
// publish a snapshot, so the data plane enforces the change on its very next request.
import type { AuditAction, JsonObject } from '../../shared/audit/index.js';
import { actorOf, type GraphQLContext } from './context.js';

/** Resolves once the data plane serves every change committed so far. */
export async function publishChange(context: GraphQLContext): Promise<void> {
  await context.publisher.publishNow();
}

/** Appends an operator action of the caller's tenant; resolves once it is durable. */
export async function auditOperatorAction(
  context: GraphQLContext,
  action: AuditAction,
  resource: { type: string; id: string },
  metadata: JsonObject = {},
  tenantId = context.caller.tenantId,
): Promise<void> {
  await context.audit.append({
    tenantId,
    action,
    resourceType: resource.type,
    resourceId: resource.id,
    metadata: { actorType: 'operator', actor: actorOf(context.caller), ...metadata },
  });
}
