// Identity credentials (AgentIdentityCredential, W3C VC data model 1.1): issue, revoke, and the
// re-issue a CA key rotation makes. Every write takes the tenant's row lock first (signing-keys.ts)
// and commits the credential, its status-list entry and the CA key it needed together; the audit
// entry follows the commit. The credential's permitted tools are the agent's allowedTools at issue
// time; its dates have second precision. The caller publishes a snapshot when `published` says
// the data planes' view changed (a new CA key or status list; every revocation and rotation).
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../../prisma/generated/client/client.js';
import { identityCredentialDocument } from '../../../shared/agentiam/credentials.js';
import { unknownAgent } from '../../../shared/agents/unknown-agent.js';
import { AUDIT_ACTIONS } from '../../../shared/audit/index.js';
import { gatewayError } from '../../../shared/errors/index.js';
import { EVENT_TYPES, type EventBus } from '../../../shared/events/index.js';
import { isEd25519PublicKey } from '../../../shared/identity/ed25519-multibase.js';
import { asTenantId } from '../../../shared/ids.js';
import type { PublicUrl } from '../../../shared/public-url.js';
import { invalidField } from '../../../shared/validation/field-issues.js';
import type { Database } from '../../../storage/engine/database.js';
import type { AuditWriter } from '../../../storage/tables/audit-writer.js';
import type { KeyCustody } from './custody.js';
import {
  type CaKeyRecord,
  caSigner,
  getOrCreateActiveCaKey,
  lockTenant,
  replaceActiveCaKey,
  type Transaction,
} from './signing-keys.js';
import { allocateStatusEntry, resignStatusLists, setRevocationBit } from './status-lists.js';

/** Lifetime of an identity credential in seconds: 60 s to 30 days, 24 h by default. */
export const CREDENTIAL_TTL_SECONDS = { min: 60, max: 30 * 24 * 3600, default: 24 * 3600 } as const;
/** Longest supervising user id and revocation reason. */
export const SUPERVISING_USER_ID_MAX = 256;
export const REVOCATION_REASON_MAX = 500;

/** Token ids listed in a credential.revoked entry at most (the count is always there). */
const AUDITED_TOKEN_IDS_MAX = 1_000;
/** Longest a rotation's transaction may run: it signs every live credential of the tenant again. */
const ROTATION_TIMEOUT_MS = 300_000;
/** Issue and revoke sign one or two documents; waiting for the tenant lock dominates. */
const WRITE_TIMEOUT_MS = 60_000;

export interface AgentIamServiceDependencies {
  readonly db: Database;
  readonly custody: KeyCustody;
  readonly publicUrl: PublicUrl;
  readonly audit: Pick<AuditWriter, 'append'>;
  /** Where a revocation is announced, so every data plane refuses it before the next snapshot. */
  readonly events?: Pick<EventBus, 'publish'> | undefined;
}

export interface IdentityCredentialRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly agentId: string;
  readonly supervisingUserId: string | null;
  readonly permittedTools: string[];
  readonly issuedAt: Date;
  readonly expiresAt: Date;
  readonly signingKeyId: string;
  readonly statusListId: string;
  readonly statusListIndex: number;
  readonly revokedAt: Date | null;
  readonly revokedReason: string | null;
  readonly document: unknown;
}

export interface IssueCredentialInput {
  readonly tenantId: string;
  readonly agentId: string;
  /**
   * Who supervises the agent, as the caller's identity system names them: stored, audited and
   * written into the credential when given; optional, as for spawn (spec §4.6 does not require it).
   */
  readonly supervisingUserId?: string | undefined;
  /** Default CREDENTIAL_TTL_SECONDS.default. */
  readonly ttlSeconds?: number | undefined;
  /** Who asked, as audit metadata records it (`api_key:<id>`). */
  readonly actor: string;
}

export interface IssuedCredential {
  readonly record: IdentityCredentialRecord;
  /** The signed verifiable credential. */
  readonly credential: Record<string, unknown>;
  /** The URL of the status list holding its revocation entry. */
  readonly statusListCredential: string;
  /** A CA key or a status list was created: the snapshot changed. */
  readonly published: boolean;
}

export async function issueIdentityCredential(
  deps: AgentIamServiceDependencies,
  input: IssueCredentialInput,
  now = new Date(),
): Promise<IssuedCredential> {
  const ttlSeconds = input.ttlSeconds ?? CREDENTIAL_TTL_SECONDS.default;
  if (
    !Number.isInteger(ttlSeconds) ||
    ttlSeconds < CREDENTIAL_TTL_SECONDS.min ||
    ttlSeconds > CREDENTIAL_TTL_SECONDS.max
  ) {
    throw invalidField(
      'ttlSeconds',
      `must be a whole number of seconds from ${CREDENTIAL_TTL_SECONDS.min} to ${CREDENTIAL_TTL_SECONDS.max}`,
    );
  }
  const { tenantId } = input;
  const issuedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const expiresAt = new Date(issuedAt.getTime() + ttlSeconds * 1000);
  const id = `urn:uuid:${randomUUID()}`;
  const issued = await deps.db.prisma.$transaction(
    async (tx) => {
      await requireTenant(tx, tenantId);
      const agent = await requireIssuableAgent(tx, tenantId, input.agentId);
      const { key, created } = await getOrCreateActiveCaKey(tx, deps.custody, tenantId);
      const signer = caSigner(deps.custody, key);
      const entry = await allocateStatusEntry(tx, signer, deps.publicUrl, issuedAt);
      const credential = await signer.sign(
        identityCredentialDocument({
          id,
          tenantId,
          agentId: agent.id,
          agentPublicKey: agent.publicKey,
          permittedTools: agent.allowedTools,
          supervisingUserId: input.supervisingUserId,
          issuedAt,
          expiresAt,
          statusListUrl: entry.statusListUrl,
          statusListIndex: entry.statusListIndex,
        }),
      );
      const record = await tx.identityCredential.create({
        data: {
          id,
          tenantId,
          agentId: agent.id,
          supervisingUserId: input.supervisingUserId ?? null,
          permittedTools: agent.allowedTools,
          issuedAt,
          expiresAt,
          signingKeyId: key.id,
          statusListId: entry.statusListId,
          statusListIndex: entry.statusListIndex,
          document: credential as Prisma.InputJsonObject,
        },
      });
      return { record, credential, entry, agent, createdKey: created ? key : null };
    },
    { maxWait: WRITE_TIMEOUT_MS, timeout: WRITE_TIMEOUT_MS },
  );
  const { agent } = issued;
  if (issued.createdKey) await auditKeyCreated(deps, issued.createdKey);
  await deps.audit.append({
    tenantId,
    action: AUDIT_ACTIONS.CREDENTIAL_ISSUED,
    resourceType: 'identity_credential',
    resourceId: id,
    metadata: {
      actorType: 'operator',
      actor: input.actor,
      agentId: agent.id,
      supervisingUserId: input.supervisingUserId ?? null,
      permittedTools: agent.allowedTools,
      expiresAt: expiresAt.toISOString(),
      signingKeyId: issued.record.signingKeyId,
      statusListId: issued.entry.statusListId,
      statusListIndex: issued.entry.statusListIndex,
    },
  });
  return {
    record: issued.record,
    credential: issued.credential,
    statusListCredential: issued.entry.statusListUrl,
    published: issued.createdKey !== null || issued.entry.listCreated,
  };
}

export interface RevokeCredentialInput {
  readonly tenantId: string;
  readonly credentialId: string;
  readonly reason: string;
  readonly actor: string;
}

/**
 * Revokes a credential of the tenant: revokedAt and revokedReason stored, its status-list bit
 * set (a new signed list version), the unexpired access tokens obtained with it revoked too
 * (IssuedToken.credentialId: the authorization_code grant after the agent proved itself with it;
 * the status-list change bumps configVersion, so the published snapshot carries their jtis in
 * revokedTokens), announced (`revocation.committed`: every data plane refuses the credential and
 * its tokens before that snapshot), audited. The credential row is updated before the tokens: a data plane
 * recording a token of this credential share-locks the row, so either its row is written first
 * and revoked here, or it waits and writes it revoked (data-plane/oauth/issued-tokens.ts).
 * Revoking a revoked credential changes nothing and answers it as it is. NOT_FOUND when the
 * tenant has no such credential.
 */
export async function revokeIdentityCredential(
  deps: AgentIamServiceDependencies,
  input: RevokeCredentialInput,
  now = new Date(),
): Promise<{ record: IdentityCredentialRecord; revoked: boolean; revokedTokens: string[] }> {
  const { tenantId, credentialId } = input;
  const outcome = await deps.db.prisma.$transaction(
    async (tx) => {
      await requireTenant(tx, tenantId);
      const found = await tx.identityCredential.findFirst({
        where: { id: credentialId, tenantId },
      });
      if (!found) {
        throw gatewayError('NOT_FOUND', { resource: `credential ${credentialId} in this tenant` });
      }
      if (found.revokedAt !== null) return { record: found, revoked: false, revokedTokens: [] };
      const { key } = await getOrCreateActiveCaKey(tx, deps.custody, tenantId);
      await setRevocationBit(
        tx,
        caSigner(deps.custody, key),
        deps.publicUrl,
        found.statusListId,
        found.statusListIndex,
        now,
      );
      const record = await tx.identityCredential.update({
        where: { id: found.id },
        data: { revokedAt: now, revokedReason: input.reason },
      });
      const tokens = await tx.issuedToken.updateManyAndReturn({
        where: { tenantId, credentialId: found.id, revokedAt: null, expiresAt: { gt: now } },
        data: { revokedAt: now },
        select: { id: true },
      });
      return { record, revoked: true, revokedTokens: tokens.map((token) => token.id) };
    },
    { maxWait: WRITE_TIMEOUT_MS, timeout: WRITE_TIMEOUT_MS },
  );
  if (outcome.revoked) {
    deps.events?.publish({
      type: EVENT_TYPES.REVOCATION_COMMITTED,
      tenantId: asTenantId(tenantId),
      revocation: { kind: 'identity_credential', credentialId },
    });
    await deps.audit.append({
      tenantId,
      action: AUDIT_ACTIONS.CREDENTIAL_REVOKED,
      resourceType: 'identity_credential',
      resourceId: credentialId,
      metadata: {
        actorType: 'operator',
        actor: input.actor,
        agentId: outcome.record.agentId,
        reason: input.reason,
        statusListId: outcome.record.statusListId,
        statusListIndex: outcome.record.statusListIndex,
        revokedTokens: outcome.revokedTokens.length,
        revokedTokenIds: outcome.revokedTokens.slice(0, AUDITED_TOKEN_IDS_MAX),
      },
    });
  }
  return outcome;
}

export interface RotationResult {
  readonly key: CaKeyRecord;
  readonly retired: readonly CaKeyRecord[];
  /** Live credentials signed again under the new key. */
  readonly reissued: number;
  /** Status lists signed again under the new key. */
  readonly statusLists: number;
}

/**
 * Rotates the tenant's CA key (DESIGN.md §6): a new active key; the old one retired, resolvable
 * until the credentials it signed expire; every live credential (not revoked, not expired) keeps
 * its id, dates and status entry and gets a new proof under the new key; every status list is
 * signed again. One transaction: a verifier never sees a half-rotated tenant. Audited.
 */
export async function rotateCaKey(
  deps: AgentIamServiceDependencies,
  input: { readonly tenantId: string; readonly actor: string },
  now = new Date(),
): Promise<RotationResult> {
  const { tenantId } = input;
  const result = await deps.db.prisma.$transaction(
    async (tx) => {
      await requireTenant(tx, tenantId);
      const { key, retired } = await replaceActiveCaKey(tx, deps.custody, tenantId, now);
      const signer = caSigner(deps.custody, key);
      const live = await tx.identityCredential.findMany({
        where: { tenantId, revokedAt: null, expiresAt: { gt: now } },
        select: { id: true, document: true },
        orderBy: { id: 'asc' },
      });
      for (const credential of live) {
        const { proof: _old, ...unsigned } = credential.document as Record<string, unknown>;
        const document = await signer.sign(unsigned);
        await tx.identityCredential.update({
          where: { id: credential.id },
          data: { signingKeyId: key.id, document: document as Prisma.InputJsonObject },
        });
      }
      const statusLists = await resignStatusLists(tx, signer, deps.publicUrl, now);
      return { key, retired, reissued: live.length, statusLists };
    },
    { maxWait: WRITE_TIMEOUT_MS, timeout: ROTATION_TIMEOUT_MS },
  );
  await deps.audit.append({
    tenantId,
    action: AUDIT_ACTIONS.SIGNING_KEY_ROTATED,
    resourceType: 'signing_key',
    resourceId: result.key.id,
    metadata: {
      actorType: 'operator',
      actor: input.actor,
      publicKeyMultibase: result.key.publicKey,
      retiredKeyIds: result.retired.map((key) => key.id),
      resolvableUntil: result.retired.map((key) => key.resolvableUntil?.toISOString() ?? null),
      reissuedCredentials: result.reissued,
      resignedStatusLists: result.statusLists,
    },
  });
  return result;
}

/** The agent, active and with an Ed25519 `z6Mk…` key to bind a credential to. */
async function requireIssuableAgent(tx: Transaction, tenantId: string, agentId: string) {
  const agent = await tx.agent.findFirst({
    where: { id: agentId, tenantId },
    select: { id: true, status: true, publicKey: true, allowedTools: true },
  });
  if (!agent) throw unknownAgent(agentId);
  if (agent.status !== 'active') throw gatewayError('AGENT_REVOKED', { agentId: agent.id });
  if (!isEd25519PublicKey(agent.publicKey)) {
    throw invalidField(
      'agentId',
      `agent ${agent.id} has no Ed25519 public key in the z6Mk… form to bind the credential to`,
    );
  }
  return agent;
}

/** Takes the tenant's row lock (signing-keys.ts); NOT_FOUND for a tenant that does not exist. */
export async function requireTenant(tx: Transaction, tenantId: string): Promise<void> {
  if (!(await lockTenant(tx, tenantId))) {
    throw gatewayError('NOT_FOUND', { resource: `tenant ${tenantId}` });
  }
}

/** Audits the tenant's first CA key, made by the issuance that needed it. */
export async function auditKeyCreated(
  deps: Pick<AgentIamServiceDependencies, 'audit'>,
  key: CaKeyRecord,
) {
  await deps.audit.append({
    tenantId: key.tenantId,
    action: AUDIT_ACTIONS.SIGNING_KEY_CREATED,
    resourceType: 'signing_key',
    resourceId: key.id,
    metadata: {
      actorType: 'system',
      purpose: 'agentiam-ca',
      publicKeyMultibase: key.publicKey,
      reason: 'first credential of the tenant',
    },
  });
}
