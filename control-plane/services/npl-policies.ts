// Publishing NPL policy versions of a tenant: the database-backed side of the registry. A
// published name@version is immutable: publishing the same content again is a no-op, different
// content under an existing version is refused.
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../shared/errors/index.js';
import { contentHash, formatPolicyUri, parsePolicy } from '../../shared/npl/index.js';
import type { Database } from '../../storage/database.js';
import { bumpConfigVersion } from './config-version.js';

export interface PublishResult {
  readonly uri: string;
  readonly contentHash: string;
  readonly created: boolean;
}

/** Throws NplError (with every issue) for an invalid document. */
export async function publishPolicyVersion(
  db: Database,
  input: { tenantId: string; source: string | object; publishedBy?: string },
): Promise<PublishResult> {
  const policy = parsePolicy(input.source);
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
    if (existing.contentHash === hash) return { uri, contentHash: hash, created: false };
    throw new GatewayError(
      'REQUEST_INVALID',
      `${uri} is already published with different content; publish a new version`,
    );
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
  return { uri, contentHash: hash, created: true };
}
