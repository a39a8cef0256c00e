// Publishing NPL policy versions of a tenant: the database-backed side of the registry. A
// published name@version is immutable: publishing the same content again is a no-op, different
// content under an existing version is refused. An operator's publication, pin or unpin is
// written with the configVersion bump and audited (a no-op publication is not);
// publishPolicyVersion alone writes and bumps only, for seeding. The caller publishes.
import { randomUUID } from 'node:crypto';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import {
  BUNDLED_POLICIES,
  contentHash,
  formatPolicyUri,
  type NplIssue,
  parsePolicyUri,
  safeParsePolicy,
} from '../../shared/npl/index.js';
import type { Database } from '../../storage/engine/database.js';
import { bumpConfigVersion } from '../../storage/tables/config-version.js';
import {
  auditOperatorChange,
  type OperatorChange,
  type OperatorChangeDependencies,
} from './operator-audit.js';

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
 * An operator's publication, published by the actor; a new version is audited as
 * npl_policy.published, the same content again changes and audits nothing.
 */
export async function publishPolicyVersionAsOperator(
  deps: OperatorChangeDependencies,
  input: OperatorChange & { readonly source: string | object },
): Promise<PublishResult> {
  const result = await publishPolicyVersion(deps.db, {
    tenantId: input.tenantId,
    source: input.source,
    publishedBy: input.actor,
  });
  if (result.created) {
    await auditOperatorChange(
      deps.audit,
      input,
      AUDIT_ACTIONS.NPL_POLICY_PUBLISHED,
      { type: 'npl_policy', id: result.uri },
      { contentHash: result.contentHash },
    );
  }
  return result;
}

/** An operator's pin or unpin of `uri`. */
export type PinChange = OperatorChange & { readonly uri: string };

/**
 * Adds `uri` to the tenant's pinned policies (evaluated on every inspect). The version must be
 * published in the tenant or bundled (NOT_FOUND otherwise): pinning a missing version would fail
 * every call closed. Returns the pins after the change, audited as npl_policy.pinned; pinning a
 * pinned version changes nothing (and is audited all the same).
 */
export async function pinPolicy(
  deps: OperatorChangeDependencies,
  input: PinChange,
): Promise<string[]> {
  const { tenantId, uri } = input;
  const ref = parsePolicyUri(uri);
  const bundled = BUNDLED_POLICIES.some(
    (policy) => policy.policyName === ref.name && policy.version === ref.version,
  );
  const pins = await deps.db.prisma.$transaction(async (tx) => {
    if (!bundled) {
      const published = await tx.nplPolicyVersion.findUnique({
        where: { tenantId_name_version: { tenantId, name: ref.name, version: ref.version } },
        select: { id: true },
      });
      if (!published) {
        throw gatewayError('NOT_FOUND', { resource: `published or bundled policy ${uri}` });
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
      data: { pinnedPolicies: pins, updatedBy: input.actor },
    });
    await bumpConfigVersion(tx, tenantId);
    return pins;
  });
  await auditOperatorChange(deps.audit, input, AUDIT_ACTIONS.NPL_POLICY_PINNED, {
    type: 'npl_policy',
    id: uri,
  });
  return pins;
}

/**
 * Removes `uri` from the tenant's pinned policies; returns the pins after the change, audited as
 * npl_policy.unpinned. NOT_FOUND when it is not pinned.
 */
export async function unpinPolicy(
  deps: OperatorChangeDependencies,
  input: PinChange,
): Promise<string[]> {
  const { tenantId, uri } = input;
  const pins = await deps.db.prisma.$transaction(async (tx) => {
    const policy = await tx.gatewayPolicy.findUniqueOrThrow({
      where: { tenantId },
      select: { pinnedPolicies: true },
    });
    if (!policy.pinnedPolicies.includes(uri)) {
      throw gatewayError('NOT_FOUND', { resource: `pin ${uri}` });
    }
    const pins = policy.pinnedPolicies.filter((pin) => pin !== uri);
    await tx.gatewayPolicy.update({
      where: { tenantId },
      data: { pinnedPolicies: pins, updatedBy: input.actor },
    });
    await bumpConfigVersion(tx, tenantId);
    return pins;
  });
  await auditOperatorChange(deps.audit, input, AUDIT_ACTIONS.NPL_POLICY_UNPINNED, {
    type: 'npl_policy',
    id: uri,
  });
  return pins;
}
