// First start: a new installation gets a tenant named `default` with its gateway policy and an
// admin API key holding every scope. The key's secret exists only in the returned value (printed
// once and written to a 0600 file by the caller); the database keeps its hash. Safe when several
// gateways start at once against one PostgreSQL: an advisory lock lets exactly one create them.
// Break-glass (`agent-gateway admin-key reset`): the same minting gives a locked-out tenant a new
// admin key, audited, and published to running planes by the configVersion bump.
import { randomUUID } from 'node:crypto';
import { AUDIT_ACTIONS, type AuditAction } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import { generateApiKey } from '../../shared/identity/api-keys.js';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import { asTenantId, type TenantId } from '../../shared/ids.js';
import type { Database, SqlExecutor } from '../../storage/engine/database.js';
import { bumpConfigVersionSql } from '../../storage/tables/config-version.js';
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

/** A minted admin key: `key` is the whole secret, known only here; the database has its hash. */
export interface MintedAdminKey {
  readonly id: string;
  readonly key: string;
  readonly prefix: string;
}

export interface BootstrapResult {
  readonly tenantId: TenantId;
  /** Present only when this call created the admin key: the one time the secret is known. */
  readonly adminKey?: MintedAdminKey;
}

/** Inserts a key of the tenant holding every scope, inside the caller's transaction. */
async function insertAdminKey(
  tx: SqlExecutor,
  tenantId: string,
  input: { readonly name: string; readonly createdBy: string },
): Promise<MintedAdminKey> {
  const id = randomUUID();
  const key = generateApiKey();
  await tx.query(
    `insert into api_keys (id, "tenantId", prefix, "secretHash", name, scopes, "createdBy")
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [id, tenantId, key.prefix, key.secretHash, input.name, [...ALL_SCOPES], input.createdBy],
  );
  return { id, key: key.key, prefix: key.prefix };
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
    const adminKey = await insertAdminKey(tx, tenantId, { name: 'admin', createdBy: 'bootstrap' });
    return { tenantId, adminKey };
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

/** What `agent-gateway admin-key reset` made: the key's secret is known only here. */
export interface AdminKeyReset {
  readonly tenantId: TenantId;
  readonly tenantName: string;
  readonly adminKey: MintedAdminKey;
}

export const ADMIN_KEY_RESET_NAME = 'break-glass admin';
/** The key's createdBy, and the actor of its audit entry: an operator at the command line. */
export const ADMIN_KEY_RESET_ACTOR = 'cli:admin-key reset';
/** Tenant names listed when the one asked for does not exist. */
const KNOWN_TENANTS_SHOWN = 20;

/**
 * Break-glass: mints a key holding every scope for the tenant (id or name), for an operator who
 * has lost every key with tenants:admin. Other keys stay as they are. The configVersion bump
 * publishes it to running planes with their next snapshot. The audit entry is durable before the
 * secret is returned; if it cannot be written the key is revoked again, so no admin key exists
 * without its trace. TENANT_UNKNOWN lists the tenants there are.
 */
export async function resetAdminKey(
  db: Database,
  audit: AuditAppender,
  tenant: string,
): Promise<AdminKeyReset> {
  const reset = await db.transaction(async (tx) => {
    const [found] = await tx.query<{ id: string; name: string }>(
      'select id, name from tenants where id = $1 or name = $1 order by (id = $1) desc limit 1',
      [tenant],
    );
    if (!found) {
      const names = await tx.query<{ name: string }>(
        'select name from tenants order by name limit $1',
        [KNOWN_TENANTS_SHOWN + 1],
      );
      const known = names.slice(0, KNOWN_TENANTS_SHOWN).map((row) => row.name);
      if (names.length > KNOWN_TENANTS_SHOWN) known.push('…');
      throw gatewayError('TENANT_UNKNOWN', {
        tenant: JSON.stringify(tenant),
        known:
          known.length > 0 ? known.join(', ') : 'none; start the gateway once to create default',
      });
    }
    const adminKey = await insertAdminKey(tx, found.id, {
      name: ADMIN_KEY_RESET_NAME,
      createdBy: ADMIN_KEY_RESET_ACTOR,
    });
    await bumpConfigVersionSql(tx, found.id);
    return { tenantId: asTenantId(found.id), tenantName: found.name, adminKey };
  });
  try {
    await audit.append({
      tenantId: reset.tenantId,
      action: AUDIT_ACTIONS.API_KEY_CREATED,
      resourceType: 'api_key',
      resourceId: reset.adminKey.id,
      metadata: {
        actorType: 'operator',
        actor: ADMIN_KEY_RESET_ACTOR,
        reason: 'break-glass admin key reset',
        breakGlass: true,
        prefix: reset.adminKey.prefix,
        scopes: [...ALL_SCOPES],
      },
    });
  } catch (error) {
    await db.transaction(async (tx) => {
      await tx.query('update api_keys set "revokedAt" = now() where id = $1', [reset.adminKey.id]);
      await bumpConfigVersionSql(tx, reset.tenantId);
    });
    throw error;
  }
  return reset;
}
