// API keys an operator creates and revokes in their tenant. A key only grants scopes it holds
// itself, and only revokes keys whose scopes it holds (revokeApiKey checks that, and keeps the
// gateway's last live tenants:admin key). Each change is written with its configVersion bump
// (tenants.ts), then audited; a revocation is then announced (`api_key.revoked`), so every control
// plane sharing the database closes the subscriptions the key opened. The caller publishes.
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import { EVENT_TYPES, type EventBus } from '../../shared/events/index.js';
import { asTenantId } from '../../shared/ids.js';
import {
  auditOperatorChange,
  type OperatorChange,
  type OperatorChangeDependencies,
} from './operator-audit.js';
import { type CreatedApiKey, createApiKey, revokeApiKey } from './tenants.js';

export interface ApiKeyServiceDependencies extends OperatorChangeDependencies {
  /** Where a revocation is announced to the control planes sharing the database. */
  readonly events: Pick<EventBus, 'publish'>;
}

export interface CreateApiKeyAsOperatorInput extends OperatorChange {
  readonly name: string;
  readonly scopes: readonly string[];
  readonly expiresAt?: Date | null;
  /** The scopes of the operator's own key: the new key may hold no other. */
  readonly actingScopes: ReadonlySet<string>;
}

/**
 * An operator's new key of the tenant, created by the actor and audited as api_key.created; its
 * secret is in the answer only. AUTH_INSUFFICIENT_SCOPE, naming the scopes the operator lacks,
 * when it asks for one its own key does not hold.
 */
export async function createApiKeyAsOperator(
  deps: OperatorChangeDependencies,
  input: CreateApiKeyAsOperatorInput,
): Promise<CreatedApiKey> {
  const beyond = input.scopes.filter((scope) => !input.actingScopes.has(scope));
  if (beyond.length > 0) {
    throw gatewayError('AUTH_INSUFFICIENT_SCOPE', { scope: beyond.join(', ') });
  }
  const key = await createApiKey(deps.db, {
    tenantId: input.tenantId,
    name: input.name,
    scopes: input.scopes,
    expiresAt: input.expiresAt ?? null,
    createdBy: input.actor,
  });
  await auditOperatorChange(
    deps.audit,
    input,
    AUDIT_ACTIONS.API_KEY_CREATED,
    { type: 'api_key', id: key.id },
    { prefix: key.prefix, scopes: [...input.scopes] },
  );
  return key;
}

/**
 * An operator's revocation of an active key of the tenant, audited as api_key.revoked and
 * announced. NOT_FOUND when the tenant has no such active key; the refusals of revokeApiKey
 * (AUTH_INSUFFICIENT_SCOPE, API_KEY_LAST_ADMIN) change, audit and announce nothing.
 */
export async function revokeApiKeyAsOperator(
  deps: ApiKeyServiceDependencies,
  input: OperatorChange & { readonly id: string; readonly actingScopes: ReadonlySet<string> },
): Promise<void> {
  const { tenantId, id } = input;
  if (!(await revokeApiKey(deps.db, tenantId, id, input.actingScopes))) {
    throw gatewayError('NOT_FOUND', { resource: `active API key ${id} in this tenant` });
  }
  await auditOperatorChange(deps.audit, input, AUDIT_ACTIONS.API_KEY_REVOKED, {
    type: 'api_key',
    id,
  });
  deps.events.publish({
    type: EVENT_TYPES.API_KEY_REVOKED,
    tenantId: asTenantId(tenantId),
    apiKey: { id },
  });
}
