// GET /api/v1/agents/{agentId}/identity (scope agents:execute): an agent's public identity
// material, which the client library (@agent-gateway/client) reads to present the agent's
// credential and to know its OAuth client — so a developer configures only an agent id, a key
// and, optionally, the agent's own secrets. Public material only: the credential as issued (a
// credential proves nothing without the agent's private key), the registered public key, the
// OAuth clients' ids and audiences; never a secret, a secret's hash, a system prompt or a
// private key. Tenant-scoped: another tenant's agent looks absent (404 NOT_FOUND, like an
// unknown id). Never cached: a revocation must be seen at once.
import type { FastifyInstance } from 'fastify';
import { isoSeconds } from '../../shared/agentiam/credentials.js';
import { unknownAgent } from '../../shared/agents/unknown-agent.js';
import { errorBodySchema } from '../../shared/errors/index.js';
import { SCOPES } from '../../shared/identity/scopes.js';
import type { Database } from '../../storage/engine/database.js';
import type { Caller } from '../graphql/context.js';
import { scopedCaller } from './scoped-caller.js';

export const AGENT_IDENTITY_PATH = '/api/v1/agents/:agentId/identity';

export interface AgentIdentityDependencies {
  readonly db: Database;
  readonly authenticate: (authorization: string | undefined) => Caller;
}

const strings = { type: 'array', items: { type: 'string' } } as const;

const identityAnswerSchema = {
  type: 'object',
  description: "The agent's public identity material.",
  properties: {
    agentId: { type: 'string' },
    did: { type: 'string', description: 'did:key of the agent key.' },
    publicKey: { type: 'string', description: 'The Ed25519 public key, multibase z6Mk….' },
    status: { type: 'string', description: '`active` or `killed`.' },
    allowedTools: strings,
    mcpAudiences: strings,
    credential: {
      type: ['object', 'null'],
      additionalProperties: true,
      description:
        'The newest unrevoked, unexpired AgentIdentityCredential exactly as issued, or null.',
    },
    credentialId: { type: ['string', 'null'] },
    credentialExpiresAt: { type: ['string', 'null'], description: 'ISO 8601, UTC.' },
    oauthClients: {
      type: 'array',
      description: "The agent's unrevoked OAuth clients (never their secrets).",
      items: {
        type: 'object',
        properties: {
          clientId: { type: 'string' },
          tokenEndpointAuthMethod: { type: 'string' },
          audiences: strings,
        },
        required: ['clientId', 'tokenEndpointAuthMethod', 'audiences'],
      },
    },
    killedAt: { type: ['string', 'null'] },
  },
  required: [
    'agentId',
    'did',
    'publicKey',
    'status',
    'allowedTools',
    'mcpAudiences',
    'credential',
    'credentialId',
    'credentialExpiresAt',
    'oauthClients',
    'killedAt',
  ],
} as const;

export async function agentIdentityRoutes(
  app: FastifyInstance,
  deps: AgentIdentityDependencies,
): Promise<void> {
  const executor = scopedCaller(deps.authenticate, SCOPES.AGENTS_EXECUTE);
  app.get<{ Params: { agentId: string } }>(
    AGENT_IDENTITY_PATH,
    {
      onRequest: executor.onRequest,
      config: { docs: 'client/README.md' },
      schema: {
        operationId: 'getAgentIdentity',
        summary: "An agent's public identity material: credential, key, OAuth client ids, status.",
        params: {
          type: 'object',
          properties: { agentId: { type: 'string', minLength: 1, maxLength: 256 } },
          required: ['agentId'],
        },
        response: {
          200: identityAnswerSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = executor.callerOf(request);
      const { agentId } = request.params;
      const now = new Date();
      const agent = await deps.db.prisma.agent.findFirst({
        where: { id: agentId, tenantId },
        select: {
          id: true,
          did: true,
          publicKey: true,
          status: true,
          allowedTools: true,
          mcpAudiences: true,
          killedAt: true,
          identityCredentials: {
            where: { revokedAt: null, expiresAt: { gt: now }, issuedAt: { lte: now } },
            orderBy: [{ issuedAt: 'desc' }, { expiresAt: 'desc' }],
            take: 1,
            select: { id: true, expiresAt: true, document: true },
          },
          oauthClients: {
            where: { revokedAt: null },
            orderBy: { createdAt: 'asc' },
            select: { id: true, authMethod: true, audiences: true },
          },
        },
      });
      if (!agent) throw unknownAgent(agentId);
      const credential = agent.identityCredentials[0];
      reply.header('cache-control', 'no-store');
      return {
        agentId: agent.id,
        did: agent.did,
        publicKey: agent.publicKey,
        status: agent.status,
        allowedTools: agent.allowedTools,
        mcpAudiences: agent.mcpAudiences,
        credential: credential?.document ?? null,
        credentialId: credential?.id ?? null,
        credentialExpiresAt: credential ? isoSeconds(credential.expiresAt) : null,
        oauthClients: agent.oauthClients.map((client) => ({
          clientId: client.id,
          tokenEndpointAuthMethod: client.authMethod,
          audiences: client.audiences,
        })),
        killedAt: agent.killedAt?.toISOString() ?? null,
      };
    },
  );
}
