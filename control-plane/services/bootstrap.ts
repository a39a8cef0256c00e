// First start: a new installation gets a tenant named `default` with its gateway policy and an
// admin API key holding every scope. The key's secret exists only in the returned value (printed
// once and written to a 0600 file by the caller); the database keeps its hash. Safe when several
// gateways start at once against one PostgreSQL: an advisory lock lets exactly one create them.
import { randomUUID } from 'node:crypto';
import { AUDIT_ACTIONS, type AuditAction } from '../../shared/audit/index.js';
import { generateApiKey } from '../../shared/identity/api-keys.js';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import { asTenantId, type TenantId } from '../../shared/ids.js';
import type { Database } from '../../storage/database.js';
import { buildInitialGatewayPolicy } from './tenants.js';

export const DEFAULT_TENANT_NAME = 'default';
const BOOTSTRAP_LOCK_KEY = 0x61677462; // "agtb"

/** What the services need of the audit writer: appends of the gateway's own actions. */
export interface AuditAppender {
  append(input: {
    tenantId: string;
    action: AuditAction;
    resourceType: string;
    resourceId: string;
    metadata?: Record<string, string | number | boolean | null | string[]>;
  }): Promise<unknown>;
}

export interface BootstrapResult {
  readonly tenantId: TenantId;
  /** Present only when this call created the admin key: the one time the secret is known. */
  readonly adminKey?: { readonly id: string; readonly key: string; readonly prefix: string };
}

export async function ensureDefaultTenant(
  db: Database,
  audit: AuditAppender,
): Promise<BootstrapResult> {
  const created = await db.transaction(async (tx) => {
    if (db.kind === 'postgres') {
      await tx.query('select pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
    }
    const existing = await tx.query<{ id: string }>('select id from tenants where name = $1', [
      DEFAULT_TENANT_NAME,
    ]);
    if (existing[0]) return { tenantId: asTenantId(existing[0].id) };
    const tenantId = asTenantId(randomUUID());
    const keyId = randomUUID();
    const key = generateApiKey();
    await tx.query(
      `insert into tenants (id, name, "displayName", "updatedAt") values ($1, $2, $3, now())`,
      [tenantId, DEFAULT_TENANT_NAME, 'Default tenant'],
    );
    await tx.query(
      `insert into gateway_policies ("tenantId", "trustedServers", "blockedMethods",
         "blockedTools", "destructiveToolPatterns", "exfilAllowedDomains", "pinnedPolicies",
         "updatedAt", "updatedBy")
       values ($1, '{}', '{}', '{}', $2, '{}', '{}', now(), 'bootstrap')`,
      [tenantId, buildInitialGatewayPolicy().destructiveToolPatterns],
    );
    await tx.query(
      `insert into api_keys (id, "tenantId", prefix, "secretHash", name, scopes, "createdBy")
       values ($1, $2, $3, $4, $5, $6, 'bootstrap')`,
      [keyId, tenantId, key.prefix, key.secretHash, 'admin', [...ALL_SCOPES]],
    );
    return { tenantId, adminKey: { id: keyId, key: key.key, prefix: key.prefix } };
  });
  if (created.adminKey) {
    await Promise.all([
      audit.append({
        tenantId: created.tenantId,
        action: AUDIT_ACTIONS.TENANT_CREATED,
        resourceType: 'tenant',
        resourceId: created.tenantId,
        metadata: { actorType: 'system', name: DEFAULT_TENANT_NAME, reason: 'first start' },
      }),
      audit.append({
        tenantId: created.tenantId,
        action: AUDIT_ACTIONS.API_KEY_CREATED,
        resourceType: 'api_key',
        resourceId: created.adminKey.id,
        metadata: { actorType: 'system', prefix: created.adminKey.prefix, scopes: [...ALL_SCOPES] },
      }),
    ]);
  }
  return created;
}
