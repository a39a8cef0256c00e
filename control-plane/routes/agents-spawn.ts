// POST /api/v1/agents/spawn (spec §2.2, scope agents:manage): spawns a governed agent — its key,
// identity credential and OAuth client — in one operation (control-plane/services/agent-spawn.ts,
// shared with the spawnAgent mutation; docs/spawn.md). The body is snake_case and one zod schema
// is its contract (documented in OpenAPI, enforced without coercion; every wrong field named,
// REQUEST_INVALID, nothing written). The answer is camelCase with the RFC-fixed OAuth names and
// the private JWK in snake_case as the spec names them (DESIGN.md §6); it holds secrets, so it is
// never cached. An optional Idempotency-Key header replays the first answer's public parts (200,
// `replayed: true`) instead of spawning again.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { errorBodySchema } from '../../shared/errors/index.js';
import type { EventBus } from '../../shared/events/index.js';
import { SCOPES } from '../../shared/identity/scopes.js';
import type { PublicUrl } from '../../shared/public-url.js';
import { compileBodyValidator } from '../../shared/validation/body-validator.js';
import { invalidField } from '../../shared/validation/field-issues.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import { actorOf, type Caller } from '../graphql/context.js';
import {
  SPAWN_RULES,
  type SpawnFieldNames,
  type SpawnOutcome,
  spawnAgent,
} from '../services/agent-spawn.js';
import type { KeyCustody } from '../services/agentiam/custody.js';
import { checkIdempotencyKey } from '../services/spawn-idempotency.js';
import type { SnapshotPublisher } from '../snapshot/publisher.js';
import { scopedCaller } from './scoped-caller.js';

export const AGENTS_SPAWN_PATH = '/api/v1/agents/spawn';
export const AGENTS_SPAWN_DOCS = 'docs/spawn.md#request';
const IDEMPOTENCY_HEADER = 'idempotency-key';
/** 1000 tool names of 256 characters and a 32 Ki-character prompt fit with room to spare. */
const SPAWN_BODY_LIMIT = 512 * 1024;

export interface AgentsSpawnDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly keyCustody: KeyCustody;
  readonly publicUrl: PublicUrl;
  readonly publisher: Pick<SnapshotPublisher, 'publishNow'>;
  readonly events: Pick<EventBus, 'publish'>;
  readonly authenticate: (authorization: string | undefined) => Caller;
}

const FIELDS: SpawnFieldNames = {
  mcpAudiences: 'mcp_audiences',
  allowedTools: 'allowed_tools',
  parentAgentId: 'parent_agent_id',
  publicKey: 'public_key',
  ttlSeconds: 'ttl_seconds',
};

const spawnBodySchema = z
  .strictObject({
    name: SPAWN_RULES.name.describe('Name shown to operators, 1-200 characters.'),
    system_prompt: SPAWN_RULES.systemPrompt.describe(
      'System prompt given to the agent (may be empty), at most 32768 characters.',
    ),
    persona: z
      .strictObject({
        tone: SPAWN_RULES.personaTone.describe('Tone of voice (spec §4.5 "voice"), free text.'),
        language: SPAWN_RULES.personaLanguage.describe('Language the agent answers in.'),
      })
      .describe("The agent's persona."),
    allowed_tools: SPAWN_RULES.allowedTools.describe(
      'Tool names (exact, or `*` globs) the agent may call; for a sub-agent, a subset of its parent’s.',
    ),
    mcp_audiences: SPAWN_RULES.mcpAudiences.describe(
      'MCP servers it may obtain tokens for, each mcp://{serverId} of a server registered in the tenant; exactly the OAuth client’s audiences.',
    ),
    public_key: SPAWN_RULES.publicKey
      .optional()
      .describe(
        'The agent’s own Ed25519 public key (z6Mk…) when it keeps its private key; the gateway then generates none.',
      ),
    role: SPAWN_RULES.role.optional().describe('Role NPL rules can match; default agent.'),
    ttl_seconds: SPAWN_RULES.ttlSeconds
      .optional()
      .describe('Lifetime of the identity credential, 60 s to 30 days; default 86400 (24 h).'),
    parent_agent_id: SPAWN_RULES.parentAgentId
      .optional()
      .describe('The spawning agent (same tenant, not killed) for a sub-agent.'),
    supervising_user_id: SPAWN_RULES.supervisingUserId
      .optional()
      .describe('The user supervising the agent; written into its credential.'),
  })
  .describe('The governed agent to spawn.');

type SpawnBody = z.infer<typeof spawnBodySchema>;

const stringList = { type: 'array', items: { type: 'string' } } as const;

const agentSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    did: { type: 'string', description: 'did:key of its public key.' },
    publicKey: { type: 'string', description: 'Ed25519, z6Mk….' },
    name: { type: 'string' },
    role: { type: 'string' },
    allowedTools: stringList,
    mcpAudiences: stringList,
    persona: {
      type: 'object',
      properties: { tone: { type: ['string', 'null'] }, language: { type: ['string', 'null'] } },
      required: ['tone', 'language'],
    },
    systemPrompt: { type: 'string' },
    parentAgentId: { type: ['string', 'null'] },
    status: { type: 'string' },
    createdAt: { type: 'string' },
  },
  required: [
    'id',
    'did',
    'publicKey',
    'name',
    'role',
    'allowedTools',
    'mcpAudiences',
    'persona',
    'systemPrompt',
    'parentAgentId',
    'status',
    'createdAt',
  ],
} as const;

function answerSchema(description: string, replay: boolean) {
  return {
    type: 'object',
    description,
    properties: {
      agent: agentSchema,
      ...(replay
        ? { replayed: { type: 'boolean', description: 'Always true: nothing new was made.' } }
        : {
            private_key_jwk: {
              type: 'object',
              description:
                'The agent’s Ed25519 private key, an OKP JWK (RFC 8037) with `d`; only when the gateway generated the key. Shown this once.',
              properties: {
                kty: { type: 'string' },
                crv: { type: 'string' },
                x: { type: 'string' },
                d: { type: 'string' },
              },
              required: ['kty', 'crv', 'x', 'd'],
            },
          }),
      credential: {
        type: 'object',
        additionalProperties: true,
        description: 'The signed AgentIdentityCredential (W3C VC 1.1, Ed25519Signature2020).',
      },
      credentialId: { type: 'string' },
      expiresAt: { type: 'string', description: 'The credential’s expirationDate.' },
      oauth: {
        type: 'object',
        properties: {
          client_id: { type: 'string' },
          ...(replay
            ? {}
            : {
                client_secret: {
                  type: 'string',
                  description: 'Shown this once; the gateway keeps only its SHA-256.',
                },
              }),
          token_endpoint: { type: 'string' },
        },
        required: replay
          ? ['client_id', 'token_endpoint']
          : ['client_id', 'client_secret', 'token_endpoint'],
      },
    },
    required: ['agent', 'credential', 'credentialId', 'expiresAt', 'oauth'],
  } as const;
}

export async function agentsSpawnRoutes(
  app: FastifyInstance,
  deps: AgentsSpawnDependencies,
): Promise<void> {
  // JSON only: a text/plain body is 415, not a string the schema then refuses.
  app.removeContentTypeParser('text/plain');
  const manager = scopedCaller(deps.authenticate, SCOPES.AGENTS_MANAGE);
  const { $schema: _dialect, ...bodyJsonSchema } = z.toJSONSchema(spawnBodySchema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  });
  app.post<{ Body: SpawnBody }>(
    AGENTS_SPAWN_PATH,
    {
      onRequest: manager.onRequest,
      bodyLimit: SPAWN_BODY_LIMIT,
      config: { docs: AGENTS_SPAWN_DOCS },
      schema: {
        operationId: 'spawnAgent',
        summary:
          'Spawn a governed agent: its Ed25519 key, identity credential and OAuth client in one operation.',
        headers: {
          type: 'object',
          properties: {
            'idempotency-key': {
              type: 'string',
              description:
                'Optional, 1-255 visible ASCII characters: a repeat within 24 h with the same body replays the first answer without its secrets; with another body, 422.',
            },
          },
        },
        body: bodyJsonSchema,
        response: {
          200: answerSchema('A replay of an earlier spawn with this Idempotency-Key.', true),
          201: answerSchema('The spawned agent, its credential and OAuth client.', false),
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
          413: errorBodySchema,
          415: errorBodySchema,
          422: errorBodySchema,
          503: errorBodySchema,
        },
      },
      // Headers are read by the handler (idempotencyKeyOf); only the body is validated here.
      validatorCompiler: compileBodyValidator(spawnBodySchema),
    },
    async (request, reply) => {
      const caller = manager.callerOf(request);
      const idempotencyKey = idempotencyKeyOf(request);
      const body = request.body;
      const outcome = await spawnAgent(
        {
          db: deps.db,
          custody: deps.keyCustody,
          publicUrl: deps.publicUrl,
          audit: deps.audit,
          publisher: deps.publisher,
          events: deps.events,
        },
        {
          tenantId: caller.tenantId,
          apiKeyId: caller.keyId,
          actor: actorOf(caller),
          idempotencyKey,
          fields: FIELDS,
          request: {
            name: body.name,
            systemPrompt: body.system_prompt,
            persona: body.persona,
            allowedTools: body.allowed_tools,
            mcpAudiences: body.mcp_audiences,
            publicKey: body.public_key,
            role: body.role,
            ttlSeconds: body.ttl_seconds,
            parentAgentId: body.parent_agent_id,
            supervisingUserId: body.supervising_user_id,
          },
        },
      );
      return reply
        .code(outcome.replayed ? 200 : 201)
        .header('cache-control', 'no-store')
        .header('pragma', 'no-cache')
        .send(spawnAnswer(outcome));
    },
  );
}

/** The answer: camelCase, RFC names under `oauth`; secrets only when made by this request. */
function spawnAnswer(outcome: SpawnOutcome) {
  return {
    agent: outcome.agent,
    ...(outcome.privateKeyJwk ? { private_key_jwk: outcome.privateKeyJwk } : {}),
    credential: outcome.credential,
    credentialId: outcome.credentialId,
    expiresAt: outcome.expiresAt,
    oauth: {
      client_id: outcome.oauth.clientId,
      ...(outcome.clientSecret === null ? {} : { client_secret: outcome.clientSecret }),
      token_endpoint: outcome.oauth.tokenEndpoint,
    },
    ...(outcome.replayed ? { replayed: true } : {}),
  };
}

function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers[IDEMPOTENCY_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw invalidField('Idempotency-Key', 'must be sent once');
  }
  return checkIdempotencyKey(value, 'Idempotency-Key');
}
