// The audit entry of an operator's change. The service that makes the change appends it once the
// write and its configVersion bump have committed, and before it answers, so no caller writes one
// and none is forgotten: actorType operator, the actor (`api_key:<id>` for an API caller), then
// the change's own metadata, in that order. The snapshot is published after the entry, by the
// caller as a rule (control-plane/graphql/mutations.ts says when a service publishes itself).
import type { AuditAction, JsonObject } from '../../shared/audit/index.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';

/** What an operator's change needs: the database it writes, the audit trail it records in. */
export interface OperatorChangeDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
}

/** Whose change, in which tenant. */
export interface OperatorChange {
  readonly tenantId: string;
  /** Who asked, as audit metadata records it (`api_key:<id>`). */
  readonly actor: string;
}

/** Appends the entry of a committed change; resolves once it is durable. */
export async function auditOperatorChange(
  audit: Pick<AuditWriter, 'append'>,
  change: OperatorChange,
  action: AuditAction,
  resource: { readonly type: string; readonly id: string },
  metadata: JsonObject = {},
): Promise<void> {
  await audit.append({
    tenantId: change.tenantId,
    action,
    resourceType: resource.type,
    resourceId: resource.id,
    metadata: { actorType: 'operator', actor: change.actor, ...metadata },
  });
}
