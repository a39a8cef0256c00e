// Tenants and their API keys. A new tenant gets the default gateway policy (shared/gateway-policy/
// gateway-policy-fields.ts): it trusts no server and denies destructive operations with the
// built-in patterns, so a fresh tenant is closed until configured. An operator's new tenant
// (createTenantAsOperator) comes with its first key and is audited in itself; createTenant,
// createApiKey and revokeApiKey alone write (and bump) only, for seeding and for the operator
// functions here and in api-keys.ts. The caller publishes.
import { randomUUID } from 'node:crypto';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import { GATEWAY_POLICY_DEFAULTS } from '../../shared/gateway-policy/gateway-policy-fields.js';
import { generateApiKey } from '../../shared/identity/api-keys.js';
import { ALL_SCOPES, isScope, SCOPES, type Scope } from '../../shared/identity/scopes.js';
import { asTenantId, type TenantId } from '../../shared/ids.js';
import type { Database } from '../../storage/engine/database.js';
import { bumpConfigVersion, bumpConfigVersionSql } from '../../storage/tables/config-version.js';
import { auditOperatorChange, type OperatorChangeDependencies } from './operator-audit.js';

const TENANT_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * The gateway policy columns a new tenant starts with besides the columns' own defaults, which
 * equal the fields' (the built-in destructive patterns are too long for a column default).
 */
export function buildInitialGatewayPolicy(): { destructiveToolPatterns: string[] } {
  return { destructiveToolPatterns: [...GATEWAY_POLICY_DEFAULTS.destructiveToolPatterns] };
}

export async function createTenant(
  db: Database,
  input: { name: string; displayName?: string },
): Promise<{ id: TenantId; name: string }> {
  if (!TENANT_NAME.test(input.name)) {
    throw gatewayError('REQUEST_INVALID', {
      problem: 'tenant name must be 1-63 lower-case letters, digits or dashes',
    });
  }
  const tenant = await db.prisma.tenant.create({
    data: {
      id: randomUUID(),
      name: input.name,
      displayName: input.displayName ?? null,
      gatewayPolicy: { create: { ...buildInitialGatewayPolicy(), updatedBy: 'tenant creation' } },
    },
  });
  return { id: asTenantId(tenant.id), name: tenant.name };
}

export interface CreateTenantAsOperatorInput {
  readonly name: string;
  readonly displayName?: string;
  /** Scopes of the first key; default: every scope but tenants:admin. */
  readonly initialKeyScopes?: readonly string[] | null;
  /** Who asked (`api_key:<id>`), and the tenant of that key. */
  readonly actor: string;
  readonly byTenant: { readonly id: string; readonly name: string };
}

/**
 * A gateway administrator's new tenant with its first API key (its secret in the answer only),
 * audited as tenant.created in the new tenant, naming the creating tenant and the key.
 */
export async function createTenantAsOperator(
  deps: OperatorChangeDependencies,
  input: CreateTenantAsOperatorInput,
): Promise<{ tenant: { id: TenantId; name: string }; apiKey: CreatedApiKey }> {
  const scopes =
    input.initialKeyScopes ?? ALL_SCOPES.filter((scope) => scope !== SCOPES.TENANTS_ADMIN);
  const tenant = await createTenant(deps.db, {
    name: input.name,
    ...(input.displayName === undefined ? {} : { displayName: input.displayName }),
  });
  const apiKey = await createApiKey(deps.db, {
    tenantId: tenant.id,
    name: 'initial',
    scopes,
    createdBy: `tenant ${input.byTenant.name} ${input.actor}`,
  });
  await auditOperatorChange(
    deps.audit,
    { tenantId: tenant.id, actor: input.actor },
    AUDIT_ACTIONS.TENANT_CREATED,
    { type: 'tenant', id: tenant.id },
    { name: tenant.name, byTenant: input.byTenant.id, initialKeyId: apiKey.id },
  );
  return { tenant, apiKey };
}

export interface CreatedApiKey {
  readonly id: string;
  readonly prefix: string;
  /** The whole key: returned once, never stored. */
  readonly key: string;
}

export async function createApiKey(
  db: Database,
  input: {
    tenantId: string;
    name: string;
    scopes: readonly string[];
    expiresAt?: Date | null;
    createdBy?: string;
  },
): Promise<CreatedApiKey> {
  const unknown = input.scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0 || input.scopes.length === 0) {
    throw gatewayError('REQUEST_INVALID', {
      problem: `unknown or missing scopes: ${unknown.join(', ')}`,
    });
  }
  const generated = generateApiKey();
  const id = randomUUID();
  await db.prisma.$transaction([
    db.prisma.apiKey.create({
      data: {
        id,
        tenantId: input.tenantId,
        prefix: generated.prefix,
        secretHash: generated.secretHash,
        name: input.name,
        scopes: [...(input.scopes as Scope[])],
        expiresAt: input.expiresAt ?? null,
        createdBy: input.createdBy ?? null,
      },
    }),
    bumpConfigVersion(db.prisma, input.tenantId),
  ]);
  return { id, prefix: generated.prefix, key: generated.key };
}

/**
 * Serializes revocations across every process sharing a PostgreSQL database, so two concurrent
 * revocations of the last two admin keys cannot both see the other one still alive: the second
 * reads the live admin keys only once the first has committed (READ COMMITTED takes a snapshot
 * per statement). An advisory lock rather than row locks on the admin keys: those would form
 * lock cycles with the key-usage recorder's multi-row `lastUsedAt` updates. The embedded
 * database runs one transaction at a time, which serializes them already.
 */
const REVOCATION_LOCK_KEY = 0x61676b72; // "agkr"

const READ_TARGET = `
select scopes, ("expiresAt" is null or "expiresAt" > $3) as live
from api_keys where id = $1 and "tenantId" = $2 and "revokedAt" is null`;

const COUNT_OTHER_LIVE_ADMIN_KEYS = `
select count(*)::int as count from api_keys
where $1 = any(scopes) and "revokedAt" is null and ("expiresAt" is null or "expiresAt" > $3)
  and id <> $2`;

/**
 * Revokes an active key of the tenant; false when the tenant has no such active key. Refuses,
 * changing nothing, with AUTH_INSUFFICIENT_SCOPE when the key holds a scope `actingScopes` lacks
 * (a key may only act on keys it could have created), and with API_KEY_LAST_ADMIN when it is the
 * gateway's last live key holding tenants:admin, of any tenant (nothing could mint that scope
 * again but the break-glass command).
 */
export async function revokeApiKey(
  db: Database,
  tenantId: string,
  id: string,
  actingScopes?: ReadonlySet<string>,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (db.kind === 'postgres') {
      await tx.query('select pg_advisory_xact_lock($1)', [REVOCATION_LOCK_KEY]);
    }
    const now = new Date().toISOString();
    const [target] = await tx.query<{ scopes: string[]; live: boolean }>(READ_TARGET, [
      id,
      tenantId,
      now,
    ]);
    if (!target) return false;
    if (actingScopes) {
      const beyond = target.scopes.filter((scope) => !actingScopes.has(scope));
      if (beyond.length > 0) {
        throw gatewayError('AUTH_INSUFFICIENT_SCOPE', { scope: beyond.join(', ') });
      }
    }
    if (target.live && target.scopes.includes(SCOPES.TENANTS_ADMIN)) {
      const [others] = await tx.query<{ count: number }>(COUNT_OTHER_LIVE_ADMIN_KEYS, [
        SCOPES.TENANTS_ADMIN,
        id,
        now,
      ]);
      if (!others?.count) throw gatewayError('API_KEY_LAST_ADMIN', { keyId: id });
    }
    await tx.query(`update api_keys set "revokedAt" = $2 where id = $1`, [id, now]);
    await bumpConfigVersionSql(tx, tenantId);
    return true;
  });
}
