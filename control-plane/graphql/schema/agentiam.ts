// AgentIAM on the management API: issue an agent identity credential (a W3C VC signed by the
// tenant CA), revoke one (its status-list bit is set and the re-signed list published), rotate the
// tenant CA key (live credentials re-issued under the new key, status lists re-signed), and read
// an agent's credentials and the tenant's CA keys. The database logic is in
// control-plane/services/agentiam/; each write is audited there and published here.
import { z } from 'zod';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { SPAWN_RULES } from '../../services/agent-spawn.js';
import {
  type AgentIamServiceDependencies,
  CREDENTIAL_TTL_SECONDS,
  issueIdentityCredential,
  REVOCATION_REASON_MAX,
  revokeIdentityCredential,
  rotateCaKey,
  SUPERVISING_USER_ID_MAX,
} from '../../services/agentiam/credentials.js';
import { CA_KEY_PURPOSE, type CaKeyRecord } from '../../services/agentiam/signing-keys.js';
import { builder } from '../builder.js';
import { actorOf, type GraphQLContext } from '../context.js';
import { publishChange } from '../mutations.js';
import { AGENT_CONFIGURATION, NEEDS_MANAGE } from './agents.js';

const CREDENTIAL_STATUSES = { VALID: 'valid', EXPIRED: 'expired', REVOKED: 'revoked' } as const;
type CredentialStatus = (typeof CREDENTIAL_STATUSES)[keyof typeof CREDENTIAL_STATUSES];

const CredentialStatusEnum = builder.enumType('CredentialStatus', {
  description: 'Where an identity credential stands now.',
  values: {
    VALID: {
      value: CREDENTIAL_STATUSES.VALID,
      description: 'Not revoked and not expired: a verifier accepts it.',
    },
    EXPIRED: {
      value: CREDENTIAL_STATUSES.EXPIRED,
      description: 'Past its expirationDate (and not revoked).',
    },
    REVOKED: {
      value: CREDENTIAL_STATUSES.REVOKED,
      description: 'Revoked: its bit in the status list is set.',
    },
  } as const,
});

const SigningKeyStatusEnum = builder.enumType('SigningKeyStatus', {
  description: 'The life of a tenant CA key.',
  values: {
    ACTIVE: {
      value: 'active',
      description: 'Signs every new credential and status list: did:svc:{tenantId}#agentiam-ca.',
    },
    RETIRED: {
      value: 'retired',
      description:
        "Replaced by a rotation; the gateway's verifier accepts it until resolvableUntil.",
    },
  } as const,
});

function credentialStatus(
  credential: { revokedAt: Date | null; expiresAt: Date },
  now = Date.now(),
): CredentialStatus {
  if (credential.revokedAt !== null) return CREDENTIAL_STATUSES.REVOKED;
  return credential.expiresAt.getTime() <= now
    ? CREDENTIAL_STATUSES.EXPIRED
    : CREDENTIAL_STATUSES.VALID;
}

builder.prismaObject('IdentityCredential', {
  description:
    'An agent identity credential: a W3C Verifiable Credential (AgentIdentityCredential) ' +
    "issued by the tenant CA (did:svc:{tenantId}) to the agent's did:key, revocable through " +
    'its entry in a Bitstring Status List.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The credential id, urn:uuid:{uuid}.' }),
    agentId: t.exposeString('agentId', { description: 'The Agent.id of its subject.' }),
    agent: t.relation('agent', { description: 'The agent it was issued to.' }),
    supervisingUserId: t.exposeString('supervisingUserId', {
      nullable: true,
      description: 'The user supervising the agent, as given at issue.',
    }),
    permittedTools: t.exposeStringList('permittedTools', {
      description: "The agent's allowed tools when it was issued (credentialSubject).",
    }),
    issuedAt: t.expose('issuedAt', {
      type: 'DateTime',
      description: 'Its issuanceDate (whole seconds).',
    }),
    expiresAt: t.expose('expiresAt', {
      type: 'DateTime',
      description: 'Its expirationDate (whole seconds).',
    }),
    revokedAt: t.expose('revokedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it was revoked; null unless revoked.',
    }),
    revokedReason: t.exposeString('revokedReason', {
      nullable: true,
      description: 'Why it was revoked, as the operator gave it; null unless revoked.',
    }),
    status: t.field({
      type: CredentialStatusEnum,
      description: 'VALID, EXPIRED or REVOKED, now.',
      select: { revokedAt: true, expiresAt: true },
      resolve: (credential) => credentialStatus(credential),
    }),
    signingKeyId: t.exposeString('signingKeyId', {
      description: 'The SigningKey.id whose key signed its current proof.',
    }),
    document: t.expose('document', {
      type: 'JSON',
      description:
        'The signed verifiable credential, as the agent presents it (its proof is replaced ' +
        'when a rotation re-issues it).',
    }),
  }),
});

const SigningKeyRef = builder.prismaObject('TenantSigningKey', {
  name: 'SigningKey',
  description:
    "A tenant CA key (Ed25519) signing the tenant's identity credentials and status lists. " +
    'Only its public half is readable; the private half is sealed under the master key.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Key id (kid).' }),
    publicKeyMultibase: t.exposeString('publicKey', {
      description: 'The Ed25519 public key, multibase base58btc (`z6Mk…`).',
    }),
    status: t.field({
      type: SigningKeyStatusEnum,
      description: 'ACTIVE or RETIRED.',
      select: { status: true },
      resolve: (key) => key.status as 'active' | 'retired',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was made.' }),
    retiredAt: t.expose('retiredAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When a rotation retired it; null while active.',
    }),
    resolvableUntil: t.expose('resolvableUntil', {
      type: 'DateTime',
      nullable: true,
      description:
        'For a retired key: until when the DID document lists it (the latest expiry of the ' +
        'live credentials it signed); null while active.',
    }),
  }),
});

builder.prismaObjectField('Agent', 'identityCredentials', (t) =>
  t.relatedConnection('identityCredentials', {
    ...AGENT_CONFIGURATION,
    cursor: 'id',
    description:
      'Identity credentials issued to this agent, newest first (by issuedAt, whole seconds; then ' +
      `by id); at most 100 per page.${NEEDS_MANAGE}`,
    query: () => ({ orderBy: [{ issuedAt: 'desc' }, { id: 'desc' }] }),
  }),
);

builder.queryField('signingKeys', (t) =>
  t.prismaField({
    type: ['TenantSigningKey'],
    description:
      "The caller's tenant CA keys (AgentIAM), newest first: the active one and those " +
      'rotations retired. Empty until the first credential is issued.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.tenantSigningKey.findMany({
        ...query,
        where: { tenantId: context.caller.tenantId, purpose: CA_KEY_PURPOSE },
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      }),
  }),
);

function servicesOf(context: GraphQLContext): AgentIamServiceDependencies {
  return {
    db: context.db,
    custody: context.keyCustody,
    publicUrl: context.publicUrl,
    audit: context.audit,
    events: context.events,
  };
}

builder.mutationField('issueAgentCredential', (t) =>
  t.prismaField({
    type: 'IdentityCredential',
    description:
      'Issues an identity credential to an active agent of the tenant (the REST twin is POST ' +
      "/api/v1/agentiam/credentials/issue). Its permitted tools are the agent's allowedTools; " +
      'the tenant CA key is made on first need. NOT_FOUND for an unknown agent, AGENT_REVOKED ' +
      'for a killed one. Audited as credential.issued.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      agentId: t.arg.id({ required: true, description: 'The Agent.id of the subject.' }),
      supervisingUserId: t.arg.string({
        description: `The user supervising the agent, 1-${SUPERVISING_USER_ID_MAX} characters; written into the credential (left out when absent).`,
        validate: SPAWN_RULES.supervisingUserId,
      }),
      ttlSeconds: t.arg.int({
        description: `Lifetime in seconds, ${CREDENTIAL_TTL_SECONDS.min}-${CREDENTIAL_TTL_SECONDS.max} (30 days). Default: ${CREDENTIAL_TTL_SECONDS.default} (24 h).`,
        validate: z.int().min(CREDENTIAL_TTL_SECONDS.min).max(CREDENTIAL_TTL_SECONDS.max),
      }),
    },
    resolve: async (query, _root, args, context) => {
      const issued = await issueIdentityCredential(servicesOf(context), {
        tenantId: context.caller.tenantId,
        agentId: String(args.agentId),
        supervisingUserId: args.supervisingUserId ?? undefined,
        ttlSeconds: args.ttlSeconds ?? undefined,
        actor: actorOf(context.caller),
      });
      if (issued.published) await publishChange(context);
      return context.db.prisma.identityCredential.findUniqueOrThrow({
        ...query,
        where: { id: issued.record.id },
      });
    },
  }),
);

builder.mutationField('revokeAgentCredential', (t) =>
  t.prismaField({
    type: 'IdentityCredential',
    description:
      'Revokes an identity credential of the tenant: its bit in the status list is set and ' +
      'the list, signed again, is published before this answers. Revoking a revoked ' +
      'credential changes nothing. NOT_FOUND when the tenant has no such credential. Audited ' +
      'as credential.revoked.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      id: t.arg.id({ required: true, description: 'The IdentityCredential.id (urn:uuid:…).' }),
      reason: t.arg.string({
        required: true,
        description: `Why, 1-${REVOCATION_REASON_MAX} characters; stored and audited.`,
        validate: z.string().min(1).max(REVOCATION_REASON_MAX),
      }),
    },
    resolve: async (query, _root, args, context) => {
      const { record, revoked } = await revokeIdentityCredential(servicesOf(context), {
        tenantId: context.caller.tenantId,
        credentialId: String(args.id),
        reason: args.reason,
        actor: actorOf(context.caller),
      });
      if (revoked) await publishChange(context);
      return context.db.prisma.identityCredential.findUniqueOrThrow({
        ...query,
        where: { id: record.id },
      });
    },
  }),
);

interface RotationPayload {
  readonly signingKey: CaKeyRecord;
  readonly retiredKeys: readonly CaKeyRecord[];
  readonly reissuedCredentials: number;
  readonly resignedStatusLists: number;
}

const RotationPayloadRef = builder.objectRef<RotationPayload>('RotateSigningKeyPayload').implement({
  description: 'What a rotation of the tenant CA key did.',
  fields: (t) => ({
    signingKey: t.field({
      type: SigningKeyRef,
      description: 'The new active key.',
      resolve: (payload) => payload.signingKey,
    }),
    retiredKeys: t.field({
      type: [SigningKeyRef],
      description: 'The keys this rotation retired (none for a tenant without a key before).',
      resolve: (payload) => [...payload.retiredKeys],
    }),
    reissuedCredentials: t.exposeInt('reissuedCredentials', {
      description:
        'Live credentials (not revoked, not expired) given a new proof under the new key; ' +
        'each keeps its id, dates and status entry.',
    }),
    resignedStatusLists: t.exposeInt('resignedStatusLists', {
      description: 'Status lists signed again under the new key.',
    }),
  }),
});

builder.mutationField('rotateSigningKey', (t) =>
  t.field({
    type: RotationPayloadRef,
    description:
      "Rotates the tenant's CA key: a new key becomes did:svc:{tenantId}#agentiam-ca, the " +
      "old one is retired (the gateway's verifier accepts it until the credentials it signed " +
      'expire; standard verifiers see only the new key), every live credential is re-issued ' +
      'under the new key (fetch it again from Agent.identityCredentials) and every status ' +
      'list re-signed, in one transaction. Audited as signing_key.rotated.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    resolve: async (_root, _args, context) => {
      const result = await rotateCaKey(servicesOf(context), {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
      });
      await publishChange(context);
      return {
        signingKey: result.key,
        retiredKeys: result.retired,
        reissuedCredentials: result.reissued,
        resignedStatusLists: result.statusLists,
      };
    },
  }),
);
