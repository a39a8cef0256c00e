// OAuth clients of a tenant (RFC 7591 registration, docs/oauth.md): register one for an active
// agent, revoke one. The metadata arrives parsed (shared/oauth/client-metadata.ts); the rules
// that need the database are checked here, inside the transaction that writes: the agent exists
// in the caller's tenant and is not killed, a private_key_jwt client's agent has an Ed25519 key
// to verify assertions with, and every resource is one of the agent's mcpAudiences. A refusal is
// OAUTH_INVALID_REQUEST carrying the RFC 7591 error string, and writes nothing. The secret is
// generated here, stored only as its hash and returned once. Every write bumps the tenant's
// configVersion in its transaction and is audited after the commit; the caller publishes.
import type { OAuthClient } from '../../prisma/generated/client/client.js';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import { isEd25519PublicKey } from '../../shared/identity/ed25519-multibase.js';
import { generateClientId, generateClientSecret } from '../../shared/oauth/client-credentials.js';
import {
  type ClientMetadata,
  type ClientMetadataIssue,
  metadataRefusal,
} from '../../shared/oauth/client-metadata.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import { bumpConfigVersion } from '../../storage/tables/config-version.js';

export interface OAuthClientServiceDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
}

export interface RegisterOAuthClientInput {
  readonly tenantId: string;
  readonly metadata: ClientMetadata;
  /** Who asked, as audit metadata records it (`api_key:<id>`). */
  readonly actor: string;
}

export interface RegisteredOAuthClient {
  readonly client: OAuthClient;
  /** The secret in clear, for the answer only; null for a private_key_jwt client. */
  readonly clientSecret: string | null;
}

/** The refusal of registration issues, as the error both the route and GraphQL raise. */
export function registrationRefused(issues: readonly ClientMetadataIssue[]) {
  const refusal = metadataRefusal(issues);
  return gatewayError(
    'OAUTH_INVALID_REQUEST',
    { problem: refusal.description },
    { details: { oauthError: refusal.error, issues: refusal.issues } },
  );
}

export async function registerOAuthClient(
  deps: OAuthClientServiceDependencies,
  input: RegisterOAuthClientInput,
  now = new Date(),
): Promise<RegisteredOAuthClient> {
  const { tenantId, metadata } = input;
  const id = generateClientId();
  const secret =
    metadata.tokenEndpointAuthMethod === 'private_key_jwt' ? null : generateClientSecret();
  const client = await deps.db.prisma.$transaction(async (tx) => {
    const agent = await tx.agent.findFirst({
      where: { id: metadata.agentId, tenantId },
      select: { id: true, name: true, status: true, publicKey: true, mcpAudiences: true },
    });
    if (!agent) {
      throw registrationRefused([
        { field: 'agent_id', message: `names no agent of this tenant (${metadata.agentId})` },
      ]);
    }
    const issues: ClientMetadataIssue[] = [];
    if (agent.status !== 'active') {
      issues.push({ field: 'agent_id', message: `names agent ${agent.id}, which is killed` });
    }
    if (
      metadata.tokenEndpointAuthMethod === 'private_key_jwt' &&
      !isEd25519PublicKey(agent.publicKey)
    ) {
      issues.push({
        field: 'token_endpoint_auth_method',
        message: `cannot be private_key_jwt: agent ${agent.id} has no Ed25519 public key (z6Mk…) to verify assertions with`,
      });
    }
    const audiences = new Set(agent.mcpAudiences);
    const resources = metadata.resources ?? agent.mcpAudiences;
    if (metadata.resources === undefined && resources.length === 0) {
      issues.push({
        field: 'resources',
        message: `must be given: agent ${agent.id} has no mcpAudiences, so the client could obtain no token`,
      });
    }
    (metadata.resources ?? []).forEach((resource, index) => {
      if (!audiences.has(resource)) {
        issues.push({
          field: `resources.${index}`,
          message: `names ${resource}, which is not one of the agent's mcpAudiences`,
        });
      }
    });
    if (issues.length > 0) throw registrationRefused(issues);
    const created = await tx.oAuthClient.create({
      data: {
        id,
        tenantId,
        agentId: agent.id,
        name: metadata.clientName ?? agent.name,
        secretHash: secret?.secretHash ?? null,
        authMethod: metadata.tokenEndpointAuthMethod,
        grantTypes: [...metadata.grantTypes],
        redirectUris: [...metadata.redirectUris],
        audiences: [...resources],
        createdAt: now,
      },
    });
    await bumpConfigVersion(tx, tenantId);
    return created;
  });
  await deps.audit.append({
    tenantId,
    action: AUDIT_ACTIONS.OAUTH_CLIENT_REGISTERED,
    resourceType: 'oauth_client',
    resourceId: client.id,
    metadata: {
      actorType: 'operator',
      actor: input.actor,
      agentId: client.agentId,
      name: client.name,
      authMethod: client.authMethod,
      grantTypes: client.grantTypes,
      redirectUris: client.redirectUris,
      audiences: client.audiences,
    },
  });
  return { client, clientSecret: secret?.secret ?? null };
}

export interface RevokeOAuthClientInput {
  readonly tenantId: string;
  readonly clientId: string;
  readonly actor: string;
}

/**
 * Revokes a client of the tenant: it authenticates no more and its tokens are refused once the
 * snapshot without it applies. Revoking a revoked client changes nothing and answers it as it
 * is (`revoked: false`). NOT_FOUND when the tenant has no such client.
 */
export async function revokeOAuthClient(
  deps: OAuthClientServiceDependencies,
  input: RevokeOAuthClientInput,
  now = new Date(),
): Promise<{ client: OAuthClient; revoked: boolean }> {
  const { tenantId, clientId } = input;
  const outcome = await deps.db.prisma.$transaction(async (tx) => {
    const found = await tx.oAuthClient.findFirst({ where: { id: clientId, tenantId } });
    if (!found) {
      throw gatewayError('NOT_FOUND', { resource: `OAuth client ${clientId} in this tenant` });
    }
    if (found.revokedAt !== null) return { client: found, revoked: false };
    // Conditional on revokedAt null: of two concurrent revocations, one writes and audits.
    const { count } = await tx.oAuthClient.updateMany({
      where: { id: found.id, revokedAt: null },
      data: { revokedAt: now },
    });
    const client = await tx.oAuthClient.findUniqueOrThrow({ where: { id: found.id } });
    if (count === 0) return { client, revoked: false };
    await bumpConfigVersion(tx, tenantId);
    return { client, revoked: true };
  });
  if (outcome.revoked) {
    await deps.audit.append({
      tenantId,
      action: AUDIT_ACTIONS.OAUTH_CLIENT_REVOKED,
      resourceType: 'oauth_client',
      resourceId: clientId,
      metadata: { actorType: 'operator', actor: input.actor, agentId: outcome.client.agentId },
    });
  }
  return outcome;
}
