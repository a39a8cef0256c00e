// Publishing NPL policy versions of a tenant: the database-backed side of the registry. A
// published name@version is immutable: publishing the same content again is a no-op, different
// content under an existing version is refused.
import { randomUUID } from 'node:crypto';
import { gatewayError } from '../../shared/errors/index.js';
import {
  BUNDLED_POLICIES,
  contentHash,
  formatPolicyUri,
  type NplIssue,
  parsePolicyUri,
  safeParsePolicy,
} from '../../shared/npl/index.js';
import { bumpConfigVersion } from '../../storage/config-version.js';
import type { Database } from '../../storage/database.js';

export interface PublishResult {
  readonly uri: string;
  readonly contentHash: string;
  readonly created: boolean;
  /** What the engine warns about (e.g. an always-false comparison); never blocks a publish. */
  readonly warnings: readonly NplIssue[];
}

/** Throws NplError (with every issue) for an invalid document. */
export async function publishPolicyVersion(
  db: Database,
  input: { tenantId: string; source: string | object; publishedBy?: string },
): Promise<PublishResult> {
  const parsed = safeParsePolicy(input.source);
  if (!parsed.success) throw parsed.error;
  const { policy, warnings } = parsed;
  const hash = contentHash(policy);
  const uri = formatPolicyUri({ name: policy.policyName, version: policy.version });
  const existing = await db.prisma.nplPolicyVersion.findUnique({
    where: {
      tenantId_name_version: {
        tenantId: input.tenantId,
        name: policy.policyName,
        version: policy.version,
      },
    },
  });
  if (existing) {
    if (existing.contentHash === hash) {
      return { uri, contentHash: hash, created: false, warnings };
    }
    throw gatewayError('REQUEST_INVALID', {
      problem: `${uri} is already published with different content; publish a new version`,
    });
  }
  await db.prisma.$transaction([
    db.prisma.nplPolicyVersion.create({
      data: {
        id: randomUUID(),
        tenantId: input.tenantId,
        name: policy.policyName,
        version: policy.version,
        document: JSON.parse(JSON.stringify(policy)) as object,
        source: typeof input.source === 'string' ? input.source : JSON.stringify(input.source),
        contentHash: hash,
        description: policy.description ?? null,
        publishedBy: input.publishedBy ?? null,
      },
    }),
    bumpConfigVersion(db.prisma, input.tenantId),
  ]);
  return { uri, contentHash: hash, created: true, warnings };
}

/**
 * Adds `uri` to the tenant's pinned policies (evaluated on every inspect). The version must be
 * published in the tenant or bundled: pinning a missing version would fail every call closed.
 * Returns the pins after the change; pinning a pinned version changes nothing.
 */
export async function pinPolicy(
  db: Database,
  tenantId: string,
  uri: string,
  updatedBy: string,
): Promise<string[]> {
  const ref = parsePolicyUri(uri);
  const bundled = BUNDLED_POLICIES.some(
    (policy) => policy.policyName === ref.name && policy.version === ref.version,
  );
  return db.prisma.$transaction(async (tx) => {
    if (!bundled) {
      const published = await tx.nplPolicyVersion.findUnique({
        where: { tenantId_name_version: { tenantId, name: ref.name, version: ref.version } },
        select: { id: true },
      });
      if (!published) {
        throw gatewayError('NOT_FOUND', { resource: `policy ${uri} is published in this tenant` });
      }
    }
    const policy = await tx.gatewayPolicy.findUniqueOrThrow({
      where: { tenantId },
      select: { pinnedPolicies: true },
    });
    if (policy.pinnedPolicies.includes(uri)) return policy.pinnedPolicies;
    const pins = [...policy.pinnedPolicies, uri];
    await tx.gatewayPolicy.update({
      where: { tenantId },
      data: { pinnedPolicies: pins, updatedBy },
    });
    await bumpConfigVersion(tx, tenantId);
    return pins;
  });
}

/** Removes `uri` from the tenant's pinned policies; returns the pins after the change. */
export async function unpinPolicy(
  db: Database,
  tenantId: string,
  uri: string,
  updatedBy: string,
): Promise<string[]> {
  return db.prisma.$transaction(async (tx) => {
    const policy = await tx.gatewayPolicy.findUniqueOrThrow({
      where: { tenantId },
      select: { pinnedPolicies: true },
    });
    if (!policy.pinnedPolicies.includes(uri)) {
      throw gatewayError('NOT_FOUND', { resource: `pinned policy ${uri} in this tenant` });
    }
    const pins = policy.pinnedPolicies.filter((pin) => pin !== uri);
    await tx.gatewayPolicy.update({
      where: { tenantId },
      data: { pinnedPolicies: pins, updatedBy },
    });
    await bumpConfigVersion(tx, tenantId);
    return pins;
  });
}
