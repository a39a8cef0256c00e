// Governed-agent spawn (issue 13, spec §2.2, docs/spawn.md): an agent with its Ed25519 key, its
// identity credential and an OAuth client for exactly its MCP audiences, in one operation shared
// by POST /api/v1/agents/spawn and the GraphQL spawnAgent mutation.
//
// Order, and why:
// 1. Checks that need the database but write nothing: audiences registered in the tenant, the
//    parent (same tenant, not killed, holding every tool asked for), a replay of the idempotency
//    key. The agent rules themselves (shared/agents/agent-rules.ts) were checked by the caller.
// 2. The key pair (unless the caller keeps its own key), then the tenant CA key and a status-list
//    index in their own short transaction under the tenant lock: allocation must be serialized,
//    signing must not be (a signature inside a transaction holds the tenant row while every
//    other write of the tenant waits). An index allocated by a spawn that then fails is never
//    used: its bit stays 0 and no credential points at it, which is harmless.
// 3. The credential is signed outside any transaction; the OAuth client id and secret are made.
// 4. One short transaction inserts the idempotency key, the agent, its credential and its client
//    and bumps configVersion. It takes the tenant lock first and re-checks what may have changed
//    since step 1-2 (the parent killed, the CA key rotated away: then steps 2-4 run again). Any
//    failure — a duplicate public key, a concurrent spawn with the same idempotency key — rolls
//    everything back: no agent, credential or client is left behind.
// 5. After the commit: the audit entry (agent.spawned, no secret), the snapshot published (the
//    in-process data plane knows the agent and its client before the answer), AGENT_CHANGED.
//
// Secrets (the private key, the client secret) exist in clear only in the answer: the key is
// never stored, the secret only as its SHA-256; neither is logged nor kept with the idempotency
// key, so a replay answers the public parts only.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Prisma } from '../../prisma/generated/client/client.js';
import { identityCredentialDocument, isoSeconds } from '../../shared/agentiam/credentials.js';
import { agentDid } from '../../shared/agentiam/dids.js';
import {
  type Ed25519PrivateJwk,
  generateEd25519KeyMaterial,
  toPrivateJwk,
} from '../../shared/agentiam/ed25519-keys.js';
import { AGENT_RULES, UNSTORABLE_TEXT } from '../../shared/agents/agent-rules.js';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import { EVENT_TYPES, type EventBus } from '../../shared/events/index.js';
import { asAgentId, asTenantId } from '../../shared/ids.js';
import { generateClientId, generateClientSecret } from '../../shared/oauth/client-credentials.js';
import type { PublicUrl } from '../../shared/public-url.js';
import { isStorableText } from '../../shared/text/storable-text.js';
import { toolsBeyond } from '../../shared/tools/name-globs.js';
import { invalidField } from '../../shared/validation/field-issues.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import { bumpConfigVersion } from '../../storage/tables/config-version.js';
import type { SnapshotPublisher } from '../snapshot/publisher.js';
import {
  auditKeyCreated,
  CREDENTIAL_TTL_SECONDS,
  requireTenant,
  SUPERVISING_USER_ID_MAX,
} from './agentiam/credentials.js';
import type { KeyCustody } from './agentiam/custody.js';
import {
  CA_KEY_STATUS,
  type CaKeyRecord,
  caSigner,
  getOrCreateActiveCaKey,
  type Transaction,
} from './agentiam/signing-keys.js';
import { allocateStatusEntry, type StatusEntry } from './agentiam/status-lists.js';
import { requireRegisteredAudiences } from './agents.js';
import {
  canonicalHash,
  findReplay,
  IdempotencyKeyTaken,
  type IdempotencyScope,
  isUniqueViolation,
  purgeExpiredIdempotencyKeys,
  recordIdempotencyKey,
} from './spawn-idempotency.js';

export const SYSTEM_PROMPT_MAX = 32_768;
export const PERSONA_TONE_MAX = 200;
export const PERSONA_LANGUAGE_MAX = 64;

function nonBlank(max: number) {
  return z
    .string()
    .max(max, `must be 1-${max} characters`)
    .regex(/\S/, `must be 1-${max} characters, not only spaces`)
    .refine(isStorableText, UNSTORABLE_TEXT);
}

/**
 * The rules of spawn's own fields, beside the agent rules it shares with createAgent: the REST
 * body and the GraphQL input are built from these, so both refuse the same values.
 */
export const SPAWN_RULES = {
  name: AGENT_RULES.name,
  systemPrompt: z
    .string()
    .max(SYSTEM_PROMPT_MAX, `must be at most ${SYSTEM_PROMPT_MAX} characters`)
    .refine(isStorableText, UNSTORABLE_TEXT),
  personaTone: nonBlank(PERSONA_TONE_MAX),
  personaLanguage: nonBlank(PERSONA_LANGUAGE_MAX),
  allowedTools: AGENT_RULES.allowedTools,
  /** At least one: the OAuth client's audiences are exactly these, and a client needs one. */
  mcpAudiences: AGENT_RULES.mcpAudiences.min(1, 'must list at least one mcp://{serverId}'),
  publicKey: AGENT_RULES.publicKey,
  role: AGENT_RULES.role,
  ttlSeconds: z
    .int('must be a whole number of seconds')
    .min(CREDENTIAL_TTL_SECONDS.min, `must be at least ${CREDENTIAL_TTL_SECONDS.min}`)
    .max(CREDENTIAL_TTL_SECONDS.max, `must be at most ${CREDENTIAL_TTL_SECONDS.max} (30 days)`),
  parentAgentId: z.string().min(1).max(256).refine(isStorableText, UNSTORABLE_TEXT),
  supervisingUserId: z
    .string()
    .min(1)
    .max(SUPERVISING_USER_ID_MAX)
    .refine(isStorableText, UNSTORABLE_TEXT),
} as const;

export type SpawnField =
  | 'mcpAudiences'
  | 'allowedTools'
  | 'parentAgentId'
  | 'publicKey'
  | 'ttlSeconds';

/** How the caller's surface names the fields a database check refuses (REST snake_case, GraphQL input.camelCase). */
export type SpawnFieldNames = Readonly<Record<SpawnField, string>>;

export interface SpawnServiceDependencies {
  readonly db: Database;
  readonly custody: KeyCustody;
  readonly publicUrl: PublicUrl;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly publisher: Pick<SnapshotPublisher, 'publishNow'>;
  readonly events: Pick<EventBus, 'publish'>;
}

/** A spawn request, validated by the caller with SPAWN_RULES. */
export interface SpawnRequest {
  readonly name: string;
  readonly systemPrompt: string;
  readonly persona: { readonly tone: string; readonly language: string };
  readonly allowedTools: readonly string[];
  readonly mcpAudiences: readonly string[];
  /** The caller keeps its own key: no private key is generated or answered. */
  readonly publicKey?: string | undefined;
  readonly role?: string | undefined;
  readonly ttlSeconds?: number | undefined;
  readonly parentAgentId?: string | undefined;
  readonly supervisingUserId?: string | undefined;
}

export interface SpawnAgentInput {
  readonly tenantId: string;
  /** The API key that asks: idempotency keys are its own. */
  readonly apiKeyId: string;
  /** Who asked, as audit metadata records it (`api_key:<id>`). */
  readonly actor: string;
  readonly request: SpawnRequest;
  readonly idempotencyKey?: string | undefined;
  readonly fields: SpawnFieldNames;
}

/** The agent as the answer shows it. */
export interface SpawnedAgentView {
  readonly id: string;
  readonly did: string;
  readonly publicKey: string;
  readonly name: string;
  readonly role: string;
  readonly allowedTools: readonly string[];
  readonly mcpAudiences: readonly string[];
  readonly persona: { readonly tone: string | null; readonly language: string | null };
  readonly systemPrompt: string;
  readonly parentAgentId: string | null;
  readonly status: string;
  /** ISO 8601. */
  readonly createdAt: string;
}

/** What an idempotency key keeps and a replay answers: no secret. */
export interface SpawnPublicAnswer {
  readonly agent: SpawnedAgentView;
  readonly credential: Record<string, unknown>;
  readonly credentialId: string;
  /** The credential's expirationDate (ISO 8601, whole seconds). */
  readonly expiresAt: string;
  readonly oauth: { readonly clientId: string; readonly tokenEndpoint: string };
}

export interface SpawnOutcome extends SpawnPublicAnswer {
  /** The generated private key; null when the caller gave its public key, and on a replay. */
  readonly privateKeyJwk: Ed25519PrivateJwk | null;
  /** The client secret in clear; null on a replay. */
  readonly clientSecret: string | null;
  /** The answer of an earlier spawn with the same idempotency key and body: nothing was made. */
  readonly replayed: boolean;
}

/** Issue and spawn transactions wait for the tenant lock at most this long. */
const WRITE_TIMEOUT_MS = 60_000;
/** A CA key rotated away between allocation and commit makes the spawn sign again, this often. */
const MAX_ATTEMPTS = 3;

export async function spawnAgent(
  deps: SpawnServiceDependencies,
  input: SpawnAgentInput,
  now = new Date(),
): Promise<SpawnOutcome> {
  const { tenantId, request, fields } = input;
  const scope: IdempotencyScope | undefined =
    input.idempotencyKey === undefined
      ? undefined
      : { tenantId, apiKeyId: input.apiKeyId, key: input.idempotencyKey };
  const bodyHash = canonicalHash(request);
  if (scope) {
    const replay = await findReplay(deps.db, scope, bodyHash, now);
    if (replay !== null) return replayOf(replay);
  }
  const ttlSeconds = request.ttlSeconds ?? CREDENTIAL_TTL_SECONDS.default;
  if (
    !Number.isInteger(ttlSeconds) ||
    ttlSeconds < CREDENTIAL_TTL_SECONDS.min ||
    ttlSeconds > CREDENTIAL_TTL_SECONDS.max
  ) {
    throw invalidField(
      fields.ttlSeconds,
      `must be a whole number of seconds from ${CREDENTIAL_TTL_SECONDS.min} to ${CREDENTIAL_TTL_SECONDS.max}`,
    );
  }
  await requireRegisteredAudiences(deps.db, tenantId, request.mcpAudiences, fields.mcpAudiences);
  if (request.parentAgentId !== undefined) {
    await requireParent(deps.db.prisma, tenantId, request, fields);
  }

  const generated = request.publicKey === undefined ? generateEd25519KeyMaterial() : undefined;
  const publicKey = request.publicKey ?? (generated?.publicKeyMultibase as string);
  const agentId = randomUUID();
  const credentialId = `urn:uuid:${randomUUID()}`;
  const issuedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const expiresAt = new Date(issuedAt.getTime() + ttlSeconds * 1000);
  const clientId = generateClientId();
  const secret = generateClientSecret();
  const tokenEndpoint = `${deps.publicUrl.get()}/oauth/token`;

  let committed: Committed | undefined;
  for (let attempt = 1; committed === undefined; attempt++) {
    const allocated = await allocateCredentialEntry(deps, tenantId, issuedAt);
    // Committed already, whatever happens to the spawn: audited as issue does.
    if (allocated.createdKey) await auditKeyCreated(deps, allocated.createdKey);
    const document = identityCredentialDocument({
      id: credentialId,
      tenantId,
      agentId,
      agentPublicKey: publicKey,
      permittedTools: request.allowedTools,
      supervisingUserId: request.supervisingUserId,
      issuedAt,
      expiresAt,
      statusListUrl: allocated.entry.statusListUrl,
      statusListIndex: allocated.entry.statusListIndex,
    });
    const credential = await caSigner(deps.custody, allocated.key).sign(document);
    try {
      committed = await commitSpawn(deps, {
        tenantId,
        scope,
        bodyHash,
        request,
        fields,
        agentId,
        publicKey,
        credentialId,
        credential,
        issuedAt,
        expiresAt,
        key: allocated.key,
        entry: allocated.entry,
        clientId,
        secretHash: secret.secretHash,
        tokenEndpoint,
        now,
      });
    } catch (error) {
      if (error instanceof IdempotencyKeyTaken && scope) {
        const replay = await findReplay(deps.db, scope, bodyHash, now);
        if (replay !== null) return replayOf(replay);
      }
      if (!(error instanceof KeyRotatedAway) && !(error instanceof IdempotencyKeyTaken)) {
        throw error;
      }
      if (attempt >= MAX_ATTEMPTS)
        throw gatewayError('INTERNAL_ERROR', undefined, { cause: error });
    }
  }

  const { answer } = committed;
  await deps.audit.append({
    tenantId,
    action: AUDIT_ACTIONS.AGENT_SPAWNED,
    resourceType: 'agent',
    resourceId: agentId,
    metadata: {
      actorType: 'operator',
      actor: input.actor,
      name: request.name,
      role: answer.agent.role,
      publicKey,
      did: answer.agent.did,
      keyGenerated: generated !== undefined,
      parentAgentId: request.parentAgentId ?? null,
      allowedTools: [...request.allowedTools],
      mcpAudiences: [...request.mcpAudiences],
      supervisingUserId: request.supervisingUserId ?? null,
      credentialId,
      expiresAt: answer.expiresAt,
      signingKeyId: committed.signingKeyId,
      statusListId: committed.entry.statusListId,
      statusListIndex: committed.entry.statusListIndex,
      oauthClientId: clientId,
      idempotencyKey: input.idempotencyKey ?? null,
    },
  });
  await deps.publisher.publishNow();
  deps.events.publish({
    type: EVENT_TYPES.AGENT_CHANGED,
    tenantId: asTenantId(tenantId),
    agent: { id: asAgentId(agentId), change: 'spawned' },
  });
  await purgeExpiredIdempotencyKeys(deps.db, now);
  return {
    ...answer,
    privateKeyJwk: generated ? toPrivateJwk(generated) : null,
    clientSecret: secret.secret,
    replayed: false,
  };
}

function replayOf(stored: Prisma.JsonValue): SpawnOutcome {
  return {
    ...(stored as unknown as SpawnPublicAnswer),
    privateKeyJwk: null,
    clientSecret: null,
    replayed: true,
  };
}

/** The parent exists in the tenant, is not killed, and holds every tool the child asks for. */
async function requireParent(
  prisma: Pick<Transaction, 'agent'>,
  tenantId: string,
  request: SpawnRequest,
  fields: SpawnFieldNames,
): Promise<void> {
  const parentAgentId = request.parentAgentId as string;
  const parent = await prisma.agent.findFirst({
    where: { id: parentAgentId, tenantId },
    select: { id: true, status: true, allowedTools: true },
  });
  if (!parent) {
    throw gatewayError(
      'NOT_FOUND',
      { resource: `parent agent ${parentAgentId} in this tenant` },
      { details: { field: fields.parentAgentId }, hintFor: 'agent' },
    );
  }
  if (parent.status !== 'active') throw gatewayError('AGENT_REVOKED', { agentId: parent.id });
  const extra = toolsBeyond(parent.allowedTools, request.allowedTools);
  if (extra.length > 0) {
    throw gatewayError(
      'AGENT_TOOLS_EXCEED_PARENT',
      { parentAgentId: parent.id, tools: extra.join(', ') },
      { details: { parentAgentId: parent.id, tools: extra } },
    );
  }
}

interface Allocation {
  readonly key: CaKeyRecord;
  readonly entry: StatusEntry;
  readonly createdKey: CaKeyRecord | null;
}

/** The tenant's CA key (made on first need) and the next status-list index, committed. */
async function allocateCredentialEntry(
  deps: SpawnServiceDependencies,
  tenantId: string,
  issuedAt: Date,
): Promise<Allocation> {
  return deps.db.prisma.$transaction(
    async (tx) => {
      await requireTenant(tx, tenantId);
      const { key, created } = await getOrCreateActiveCaKey(tx, deps.custody, tenantId);
      const entry = await allocateStatusEntry(
        tx,
        caSigner(deps.custody, key),
        deps.publicUrl,
        issuedAt,
      );
      return { key, entry, createdKey: created ? key : null };
    },
    { maxWait: WRITE_TIMEOUT_MS, timeout: WRITE_TIMEOUT_MS },
  );
}

/** The CA key that signed was retired by a rotation before the commit: sign again. */
class KeyRotatedAway extends Error {}

interface Committed {
  readonly answer: SpawnPublicAnswer;
  readonly signingKeyId: string;
  readonly entry: StatusEntry;
}

interface CommitInput {
  readonly tenantId: string;
  readonly scope: IdempotencyScope | undefined;
  readonly bodyHash: string;
  readonly request: SpawnRequest;
  readonly fields: SpawnFieldNames;
  readonly agentId: string;
  readonly publicKey: string;
  readonly credentialId: string;
  readonly credential: Record<string, unknown>;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
  readonly key: CaKeyRecord;
  readonly entry: StatusEntry;
  readonly clientId: string;
  readonly secretHash: string;
  readonly tokenEndpoint: string;
  readonly now: Date;
}

/** The one transaction that writes the spawn: everything or nothing. */
async function commitSpawn(deps: SpawnServiceDependencies, c: CommitInput): Promise<Committed> {
  const { request, tenantId } = c;
  return deps.db.prisma.$transaction(
    async (tx) => {
      await requireTenant(tx, tenantId);
      const key = await tx.tenantSigningKey.findUnique({
        where: { id: c.key.id },
        select: { status: true },
      });
      if (key?.status !== CA_KEY_STATUS.ACTIVE) throw new KeyRotatedAway();
      if (request.parentAgentId !== undefined) {
        await requireParent(tx, tenantId, request, c.fields);
      }
      const agentView = (createdAt: Date): SpawnedAgentView => ({
        id: c.agentId,
        did: agentDid(c.publicKey),
        publicKey: c.publicKey,
        name: request.name,
        role: request.role ?? 'agent',
        allowedTools: [...request.allowedTools],
        mcpAudiences: [...request.mcpAudiences],
        persona: { tone: request.persona.tone, language: request.persona.language },
        systemPrompt: request.systemPrompt,
        parentAgentId: request.parentAgentId ?? null,
        status: 'active',
        createdAt: createdAt.toISOString(),
      });
      const answer: SpawnPublicAnswer = {
        agent: agentView(c.now),
        credential: c.credential,
        credentialId: c.credentialId,
        expiresAt: isoSeconds(c.expiresAt),
        oauth: { clientId: c.clientId, tokenEndpoint: c.tokenEndpoint },
      };
      // First: a concurrent spawn with the same key waits here for this one, then fails.
      if (c.scope) {
        await recordIdempotencyKey(
          tx,
          c.scope,
          {
            bodyHash: c.bodyHash,
            agentId: c.agentId,
            answer: answer as unknown as Prisma.InputJsonObject,
          },
          c.now,
        );
      }
      try {
        await tx.agent.create({
          data: {
            id: c.agentId,
            tenantId,
            name: request.name,
            role: request.role ?? 'agent',
            systemPrompt: request.systemPrompt,
            personaTone: request.persona.tone,
            personaLanguage: request.persona.language,
            allowedTools: [...request.allowedTools],
            mcpAudiences: [...request.mcpAudiences],
            publicKey: c.publicKey,
            did: agentDid(c.publicKey),
            parentAgentId: request.parentAgentId ?? null,
            supervisingUserId: request.supervisingUserId ?? null,
            createdAt: c.now,
          },
        });
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw invalidField(c.fields.publicKey, 'is the key of another agent of this tenant');
        }
        throw error;
      }
      await tx.identityCredential.create({
        data: {
          id: c.credentialId,
          tenantId,
          agentId: c.agentId,
          supervisingUserId: request.supervisingUserId ?? null,
          permittedTools: [...request.allowedTools],
          issuedAt: c.issuedAt,
          expiresAt: c.expiresAt,
          signingKeyId: c.key.id,
          statusListId: c.entry.statusListId,
          statusListIndex: c.entry.statusListIndex,
          document: c.credential as Prisma.InputJsonObject,
        },
      });
      await tx.oAuthClient.create({
        data: {
          id: c.clientId,
          tenantId,
          agentId: c.agentId,
          name: request.name,
          secretHash: c.secretHash,
          authMethod: 'client_secret_basic',
          grantTypes: ['client_credentials'],
          redirectUris: [],
          audiences: [...request.mcpAudiences],
          createdAt: c.now,
        },
      });
      await bumpConfigVersion(tx, tenantId);
      return { answer, signingKeyId: c.key.id, entry: c.entry };
    },
    { maxWait: WRITE_TIMEOUT_MS, timeout: WRITE_TIMEOUT_MS },
  );
}
