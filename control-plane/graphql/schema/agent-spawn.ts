// spawnAgent: the GraphQL twin of POST /api/v1/agents/spawn (docs/spawn.md). The same service
// (control-plane/services/agent-spawn.ts) does the work — key, credential, OAuth client in one
// transaction, audited, published — and the same rules check the input, in camelCase. The
// secrets (privateKeyJwk, oauth.clientSecret) are in this answer only; a replay of an
// idempotency key answers them null with replayed true.
import { z } from 'zod';
import { SCOPES } from '../../../shared/identity/scopes.js';
import {
  PERSONA_LANGUAGE_MAX,
  PERSONA_TONE_MAX,
  SPAWN_RULES,
  type SpawnFieldNames,
  type SpawnOutcome,
  SYSTEM_PROMPT_MAX,
  spawnAgent,
} from '../../services/agent-spawn.js';
import { checkIdempotencyKey, IDEMPOTENCY_KEY_MAX } from '../../services/spawn-idempotency.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';

const FIELDS: SpawnFieldNames = {
  mcpAudiences: 'input.mcpAudiences',
  allowedTools: 'input.allowedTools',
  parentAgentId: 'input.parentAgentId',
  publicKey: 'input.publicKey',
  ttlSeconds: 'input.ttlSeconds',
};

const SpawnPersonaInput = builder.inputType('SpawnPersonaInput', {
  description: "The spawned agent's persona.",
  fields: (t) => ({
    tone: t.string({
      required: true,
      description: `Tone of voice (spec §4.5 "voice"), free text, 1-${PERSONA_TONE_MAX} characters.`,
    }),
    language: t.string({
      required: true,
      description: `Language it answers in, free text, 1-${PERSONA_LANGUAGE_MAX} characters.`,
    }),
  }),
});

const SpawnAgentInput = builder.inputType('SpawnAgentInput', {
  description:
    'A governed agent to spawn with its key, identity credential and OAuth client (the body of ' +
    'POST /api/v1/agents/spawn in camelCase).',
  validate: z.looseObject({
    name: SPAWN_RULES.name,
    systemPrompt: SPAWN_RULES.systemPrompt,
    persona: z.looseObject({
      tone: SPAWN_RULES.personaTone,
      language: SPAWN_RULES.personaLanguage,
    }),
    allowedTools: SPAWN_RULES.allowedTools,
    mcpAudiences: SPAWN_RULES.mcpAudiences,
    publicKey: SPAWN_RULES.publicKey.nullish(),
    role: SPAWN_RULES.role.nullish(),
    ttlSeconds: SPAWN_RULES.ttlSeconds.nullish(),
    parentAgentId: SPAWN_RULES.parentAgentId.nullish(),
    supervisingUserId: SPAWN_RULES.supervisingUserId.nullish(),
  }),
  fields: (t) => ({
    name: t.string({ required: true, description: 'Name shown to operators, 1-200 characters.' }),
    systemPrompt: t.string({
      required: true,
      description: `System prompt given to the agent (may be empty), at most ${SYSTEM_PROMPT_MAX} characters.`,
    }),
    persona: t.field({ type: SpawnPersonaInput, required: true, description: 'Its persona.' }),
    allowedTools: t.stringList({
      required: true,
      description:
        "Tool names (exact, or `*` globs) it may call: at most 1000; a sub-agent's must be held by its parent (AGENT_TOOLS_EXCEED_PARENT otherwise).",
    }),
    mcpAudiences: t.stringList({
      required: true,
      description:
        "MCP servers it may obtain tokens for, 1-100, each mcp://{serverId} of a server registered in the tenant: exactly its OAuth client's audiences.",
    }),
    publicKey: t.string({
      description:
        'Its own Ed25519 public key (z6Mk…) when the caller keeps the private key; the gateway then generates none (privateKeyJwk null).',
    }),
    role: t.string({ description: 'Role NPL rules can match, 1-100 characters. Default: agent.' }),
    ttlSeconds: t.int({
      description:
        'Lifetime of its identity credential in seconds, 60-2592000 (30 days). Default: 86400.',
    }),
    parentAgentId: t.id({
      description: 'The agent (same tenant, not killed) spawning this one, for a sub-agent.',
    }),
    supervisingUserId: t.string({
      description: 'The user supervising it, 1-256 characters; written into its credential.',
    }),
    idempotencyKey: t.string({
      description: `1-${IDEMPOTENCY_KEY_MAX} visible ASCII characters: a repeat by the same API key within 24 h with the same input answers the first spawn (secrets null, replayed true); with another input, IDEMPOTENCY_KEY_REUSED. Shared with the REST Idempotency-Key header.`,
    }),
  }),
});

const SpawnedOAuthClientRef = builder.objectRef<SpawnOutcome>('SpawnedOAuthClient').implement({
  description: "The spawned agent's OAuth client (client_credentials, client_secret_basic).",
  fields: (t) => ({
    clientId: t.string({
      description: 'The client_id.',
      resolve: (outcome) => outcome.oauth.clientId,
    }),
    clientSecret: t.string({
      nullable: true,
      description:
        'The client_secret, shown this once (the gateway keeps only its SHA-256); null on a replay.',
      resolve: (outcome) => outcome.clientSecret,
    }),
    tokenEndpoint: t.string({
      description: 'Where it obtains tokens: <public URL>/oauth/token.',
      resolve: (outcome) => outcome.oauth.tokenEndpoint,
    }),
  }),
});

const SpawnAgentPayloadRef = builder.objectRef<SpawnOutcome>('SpawnAgentPayload').implement({
  description: 'A spawned agent, its identity credential and OAuth client, and its secrets once.',
  fields: (t) => ({
    agent: t.prismaField({
      type: 'Agent',
      description: 'The agent.',
      resolve: (query, outcome, _args, context) =>
        context.db.prisma.agent.findUniqueOrThrow({ ...query, where: { id: outcome.agent.id } }),
    }),
    privateKeyJwk: t.field({
      type: 'JSON',
      nullable: true,
      description:
        "The agent's Ed25519 private key as an OKP JWK (RFC 8037, with d), shown this once; null when the caller gave publicKey, and on a replay.",
      resolve: (outcome) => outcome.privateKeyJwk,
    }),
    credential: t.field({
      type: 'JSON',
      description: 'The signed AgentIdentityCredential (W3C VC 1.1).',
      resolve: (outcome) => outcome.credential,
    }),
    credentialId: t.string({
      description: 'Its id, urn:uuid:….',
      resolve: (outcome) => outcome.credentialId,
    }),
    expiresAt: t.field({
      type: 'DateTime',
      description: 'Its expirationDate.',
      resolve: (outcome) => new Date(outcome.expiresAt),
    }),
    oauth: t.field({
      type: SpawnedOAuthClientRef,
      description: 'Its OAuth client.',
      resolve: (outcome) => outcome,
    }),
    replayed: t.boolean({
      description:
        'True when this answers an earlier spawn with the same idempotency key: nothing new was made.',
      resolve: (outcome) => outcome.replayed,
    }),
  }),
});

builder.mutationField('spawnAgent', (t) =>
  t.field({
    type: SpawnAgentPayloadRef,
    description:
      'Spawns a governed agent (the REST twin is POST /api/v1/agents/spawn): its Ed25519 key ' +
      '(unless publicKey is given), an identity credential signed by the tenant CA and an OAuth ' +
      'client for exactly its mcpAudiences, committed together or not at all, in the snapshot ' +
      'before this answers. Audited as agent.spawned.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      input: t.arg({ type: SpawnAgentInput, required: true, description: 'The agent to spawn.' }),
    },
    resolve: (_root, { input }, context) => {
      const idempotencyKey =
        input.idempotencyKey == null
          ? undefined
          : checkIdempotencyKey(input.idempotencyKey, 'input.idempotencyKey');
      return spawnAgent(
        {
          db: context.db,
          custody: context.keyCustody,
          publicUrl: context.publicUrl,
          audit: context.audit,
          publisher: context.publisher,
          events: context.events,
        },
        {
          tenantId: context.caller.tenantId,
          apiKeyId: context.caller.keyId,
          actor: actorOf(context.caller),
          idempotencyKey,
          fields: FIELDS,
          request: {
            name: input.name,
            systemPrompt: input.systemPrompt,
            persona: { tone: input.persona.tone, language: input.persona.language },
            allowedTools: input.allowedTools,
            mcpAudiences: input.mcpAudiences,
            publicKey: input.publicKey ?? undefined,
            role: input.role ?? undefined,
            ttlSeconds: input.ttlSeconds ?? undefined,
            parentAgentId: input.parentAgentId == null ? undefined : String(input.parentAgentId),
            supervisingUserId: input.supervisingUserId ?? undefined,
          },
        },
      );
    },
  }),
);
