// Publishing NPL policy versions of a tenant: the database-backed side of the registry. A
// published name@version is immutable: publishing the same content again is a no-op, different
// content under an existing version is refused; a version that changes no rule of the previous
// one is published with a warning. An operator's publication, pin or unpin is
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
  type NplPolicy,
  parsePolicyUri,
  safeParsePolicy,
  sameAsPreviousWarning,
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
  /** True for a new version; false when this content is published under it already. */
  readonly created: boolean;
  /**
   * What did not prevent publishing: the engine's findings (e.g. an always-false comparison) and
   * same_as_previous, a version that changes no rule of the previous one.
   */
  readonly warnings: readonly NplIssue[];
}

interface Publication extends PublishResult {
  readonly policy: NplPolicy;
}

/**
 * What publishing `source` in the tenant answers, without writing anything: NplError (with every
 * issue) for an invalid document, REQUEST_INVALID for other content under a published version.
 * "Previous" is the version of the name published last: a version that brings back older rules
 * (a rollback) is meant and not warned about.
 */
async function preparePublication(
  db: Database,
  input: { tenantId: string; source: string | object },
): Promise<Publication> {
  const parsed = safeParsePolicy(input.source);
  if (!parsed.success) throw parsed.error;
  const { policy } = parsed;
  const hash = contentHash(policy);
  const uri = formatPolicyUri({ name: policy.policyName, version: policy.version });
  const { tenantId } = input;
  const name = policy.policyName;
  const [existing, previous] = await Promise.all([
    db.prisma.nplPolicyVersion.findUnique({
      where: { tenantId_name_version: { tenantId, name, version: policy.version } },
      select: { contentHash: true },
    }),
    db.prisma.nplPolicyVersion.findFirst({
      where: { tenantId, name, version: { not: policy.version } },
      orderBy: [{ publishedAt: 'desc' }, { id: 'desc' }],
      select: { version: true, document: true },
    }),
  ]);
  if (existing && existing.contentHash !== hash) {
    throw gatewayError('REQUEST_INVALID', {
      problem: `${uri} is already published with different content; publish a new version`,
    });
  }
  const unchanged = previous && sameAsPreviousWarning(policy, previous, input.source);
  const warnings = unchanged ? [...parsed.warnings, unchanged] : parsed.warnings;
  return { policy, uri, contentHash: hash, created: !existing, warnings };
}

/** What publishing `source` would answer (the warnings included); nothing is written. */
export async function previewPublication(
  db: Database,
  input: { tenantId: string; source: string | object },
): Promise<PublishResult> {
  const { policy: _policy, ...result } = await preparePublication(db, input);
  return result;
}

/** Throws NplError (with every issue) for an invalid document. */
export async function publishPolicyVersion(
  db: Database,
  input: { tenantId: string; source: string | object; publishedBy?: string },
): Promise<PublishResult> {
  const { policy, ...result } = await preparePublication(db, input);
  if (!result.created) return result;
  await db.prisma.$transaction([
    db.prisma.nplPolicyVersion.create({
      data: {
        id: randomUUID(),
        tenantId: input.tenantId,
        name: policy.policyName,
        version: policy.version,
        document: JSON.parse(JSON.stringify(policy)) as object,
        source: typeof input.source === 'string' ? input.source : JSON.stringify(input.source),
        contentHash: result.contentHash,
        description: policy.description ?? null,
        publishedBy: input.publishedBy ?? null,
      },
    }),
    bumpConfigVersion(db.prisma, input.tenantId),
  ]);
  return result;
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

/** A pin: `replaces`, when given, is the pinned version `uri` takes the place of. */
export type PinRequest = PinChange & { readonly replaces?: string | undefined };

/**
 * Pins `uri` (evaluated on every inspect of the tenant). The version must be published in the
 * tenant or bundled (NOT_FOUND otherwise): pinning a missing version would fail every call
 * closed. Without `replaces` it is added to the pins; pinning a pinned version changes nothing
 * (and is audited all the same). With `replaces` it takes that version's place in one write, so
 * no snapshot ever holds both or neither: an upgrade (a version of the same policy name, else
 * REQUEST_INVALID on `replaces`; a pin of another policy is a decision of its own), refused when
 * `replaces` is not pinned (NPL_PIN_REPLACES_NOT_PINNED) or `uri` already is
 * (NPL_PIN_ALREADY_PINNED). Audited once as npl_policy.pinned, with `replaced` in the metadata
 * when it replaced one. Returns the pins after the change.
 */
export async function pinPolicy(
  deps: OperatorChangeDependencies,
  input: PinRequest,
): Promise<string[]> {
  const { tenantId, uri, replaces } = input;
  const ref = parsePolicyUri(uri);
  if (replaces !== undefined) assertSamePolicy(ref.name, replaces);
  const bundled = BUNDLED_POLICIES.some(
    (policy) => policy.policyName === ref.name && policy.version === ref.version,
  );
  // A published version never changes or goes, so it needs no place in the transaction.
  if (!bundled) {
    const published = await deps.db.prisma.nplPolicyVersion.findUnique({
      where: { tenantId_name_version: { tenantId, name: ref.name, version: ref.version } },
      select: { id: true },
    });
    if (!published) {
      throw gatewayError('NOT_FOUND', { resource: `published or bundled policy ${uri}` });
    }
  }
  const pins = await changePins(deps.db, input, (pinned) => {
    if (replaces === undefined) return pinned.includes(uri) ? null : [...pinned, uri];
    const details = { details: { pinnedPolicies: [...pinned] } };
    if (!pinned.includes(replaces)) {
      const list = pinned.length === 0 ? 'none' : pinned.join(', ');
      throw gatewayError('NPL_PIN_REPLACES_NOT_PINNED', { replaces, uri, pinned: list }, details);
    }
    if (pinned.includes(uri)) {
      throw gatewayError('NPL_PIN_ALREADY_PINNED', { uri, replaces }, details);
    }
    // In its place: the order of the pins breaks ties between equally restrictive decisions.
    return pinned.map((pin) => (pin === replaces ? uri : pin));
  });
  await auditOperatorChange(
    deps.audit,
    input,
    AUDIT_ACTIONS.NPL_POLICY_PINNED,
    { type: 'npl_policy', id: uri },
    replaces === undefined ? {} : { replaced: replaces },
  );
  return pins;
}

/** REQUEST_INVALID naming `replaces` unless it is a version of the policy `name`. */
function assertSamePolicy(name: string, replaces: string): void {
  const replaced = parsePolicyUri(replaces).name;
  if (replaced === name) return;
  const message = `is a version of ${replaced}, not of ${name}: a pin replaces another version of the same policy (unpin ${replaces} to drop it)`;
  throw gatewayError(
    'REQUEST_INVALID',
    { problem: `replaces: ${message}` },
    { details: { issues: [{ field: 'replaces', message }] } },
  );
}

/**
 * Removes `uri` from the tenant's pinned policies; returns the pins after the change, audited as
 * npl_policy.unpinned. NOT_FOUND when it is not pinned.
 */
export async function unpinPolicy(
  deps: OperatorChangeDependencies,
  input: PinChange,
): Promise<string[]> {
  const { uri } = input;
  const pins = await changePins(deps.db, input, (pinned) => {
    if (!pinned.includes(uri)) throw gatewayError('NOT_FOUND', { resource: `pin ${uri}` });
    return pinned.filter((pin) => pin !== uri);
  });
  await auditOperatorChange(deps.audit, input, AUDIT_ACTIONS.NPL_POLICY_UNPINNED, {
    type: 'npl_policy',
    id: uri,
  });
  return pins;
}

/**
 * Applies `change` to the tenant's pins in one transaction with its configVersion bump, and
 * answers the pins after it. `change` answers the new pins, null when there is nothing to change,
 * or throws a refusal (then nothing is written). It runs twice when it changes something: once to
 * decide, and again on the pins read after this transaction locked the policy row, so concurrent
 * changes of the pins queue and none is lost. The row is locked before the tenant's (the bump),
 * in the order of updateGatewayPolicy, so the two cannot deadlock.
 */
async function changePins(
  db: Database,
  input: OperatorChange,
  change: (pinned: readonly string[]) => string[] | null,
): Promise<string[]> {
  const { tenantId, actor } = input;
  return db.prisma.$transaction(async (tx) => {
    const readPins = async () =>
      (
        await tx.gatewayPolicy.findUniqueOrThrow({
          where: { tenantId },
          select: { pinnedPolicies: true },
        })
      ).pinnedPolicies;
    const seen = await readPins();
    if (change(seen) === null) return seen;
    await tx.gatewayPolicy.update({ where: { tenantId }, data: { updatedBy: actor } });
    const pinned = await readPins();
    const pins = change(pinned) ?? pinned;
    await tx.gatewayPolicy.update({ where: { tenantId }, data: { pinnedPolicies: pins } });
    await bumpConfigVersion(tx, tenantId);
    return pins;
  });
}
