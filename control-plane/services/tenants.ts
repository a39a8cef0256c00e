// Tenants and their API keys. A new tenant gets a gateway policy that trusts no server and denies
// destructive operations with the built-in patterns: a fresh tenant is closed until configured.
import { randomUUID } from 'node:crypto';
import { gatewayError } from '../../shared/errors/index.js';
import { DEFAULT_DESTRUCTIVE_TOOL_PATTERNS } from '../../shared/gateway-policy/destructive-tool-patterns.js';
import { generateApiKey } from '../../shared/identity/api-keys.js';
import { isScope, type Scope } from '../../shared/identity/scopes.js';
import { asTenantId, type TenantId } from '../../shared/ids.js';
import { bumpConfigVersion } from '../../storage/config-version.js';
import type { Database } from '../../storage/database.js';

const TENANT_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The gateway policy columns a new tenant starts with (besides the schema's defaults). */
export function buildInitialGatewayPolicy(): { destructiveToolPatterns: string[] } {
  return { destructiveToolPatterns: [...DEFAULT_DESTRUCTIVE_TOOL_PATTERNS] };
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

export async function revokeApiKey(db: Database, tenantId: string, id: string): Promise<boolean> {
  return db.prisma.$transaction(async (tx) => {
    const { count } = await tx.apiKey.updateMany({
      where: { id, tenantId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count > 0) await bumpConfigVersion(tx, tenantId);
    return count > 0;
  });
}
