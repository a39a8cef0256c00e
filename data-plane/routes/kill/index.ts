// POST /api/v2/infrastructure/agents/{agentPublicKey}/kill {reason} — the kill switch (DESIGN.md
// §7), served by every data plane (scope agents:kill). The path names the agent by its `z6Mk…`
// Ed25519 public key within the caller's tenant: a key in another form is 400 REQUEST_INVALID, a
// key no agent of the tenant has is 404 AGENT_NOT_FOUND (a lookup by path, unlike inspect's
// AGENT_UNKNOWN decision). The body is exactly {reason}, 1–500 characters. The work is the
// KillSwitch's (data-plane/kill/kill-switch.ts); killing a killed agent answers 200 with the
// original kill. Every input is checked here before anything is written.
//
// Fastify's validator would strip unknown fields and coerce types (its defaults), so the JSON
// schema documents the contract (OpenAPI) and the route's validator checks the same rules
// strictly: the path key first, then the body (a zod schema, shared/validation/body-validator.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { z } from 'zod';
import { errorBodySchema } from '../../../http-edge/errors.js';
import { UNSTORABLE_TEXT } from '../../../shared/agents/agent-rules.js';
import type { GatewayError } from '../../../shared/errors/index.js';
import { isEd25519PublicKey } from '../../../shared/identity/ed25519-multibase.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { isStorableText } from '../../../shared/text/storable-text.js';
import {
  compileBodyValidator,
  type ValidatorCompiler,
} from '../../../shared/validation/body-validator.js';
import { invalidField } from '../../../shared/validation/field-issues.js';
import type { KillAnswer } from '../../../storage/tables/agent-kills.js';
import type { KillSwitch } from '../../kill/kill-switch.js';

export const KILL_PATH = '/api/v2/infrastructure/agents/:agentPublicKey/kill';
export const KILL_DOCS = 'docs/kill-switch.md#request';
export const MAX_KILL_REASON_LENGTH = 500;
/** Longer than any `z6Mk…` key (48 characters): refused before it is decoded. */
const MAX_KEY_LENGTH = 128;

export interface KillRoutesDependencies {
  readonly killSwitch: Pick<KillSwitch, 'kill'>;
}

const countsSchema = {
  type: 'object',
  properties: {
    credentials: { type: 'integer' },
    delegations: { type: 'integer' },
    oauthClients: { type: 'integer' },
    tokens: { type: 'integer' },
  },
  required: ['credentials', 'delegations', 'oauthClients', 'tokens'],
} as const;

export const killAnswerSchema = {
  type: 'object',
  description: 'What the kill revoked, rejected and aborted, and where it was confirmed.',
  properties: {
    agentId: { type: 'string' },
    publicKey: { type: 'string' },
    killId: { type: 'string' },
    killedAt: { type: 'string', format: 'date-time' },
    reason: { type: 'string' },
    revoked: countsSchema,
    rejectedApprovals: { type: 'integer' },
    abortedExecutions: { type: 'integer' },
    auditId: { type: 'string' },
    propagation: {
      type: 'object',
      properties: {
        dataPlanes: { type: 'integer' },
        confirmed: { type: 'integer' },
        slowestMs: { type: ['number', 'null'] },
        confirmedBy: { type: 'array', items: { type: 'string' } },
        controlPlaneReached: { type: 'boolean' },
      },
      required: ['dataPlanes', 'confirmed', 'slowestMs', 'confirmedBy', 'controlPlaneReached'],
    },
  },
  required: [
    'agentId',
    'publicKey',
    'killId',
    'killedAt',
    'reason',
    'revoked',
    'rejectedApprovals',
    'abortedExecutions',
    'auditId',
    'propagation',
  ],
} as const;

export const killRoutes = fastifyPlugin(registerKillRoute, {
  name: 'agent-gateway-kill',
  dependencies: ['agent-gateway-errors', 'agent-gateway-auth'],
  encapsulate: true,
});

async function registerKillRoute(app: FastifyInstance, deps: KillRoutesDependencies) {
  app.post(
    KILL_PATH,
    {
      onRequest: app.requireScope(SCOPES.AGENTS_KILL),
      config: { docs: KILL_DOCS },
      schema: {
        operationId: 'killAgent',
        summary:
          'Kill an agent everywhere: revoke its credentials, delegations, OAuth clients and ' +
          'tokens, reject its pending approvals, abort its in-flight calls (idempotent).',
        params: {
          type: 'object',
          properties: {
            agentPublicKey: {
              type: 'string',
              pattern: '^z6Mk[1-9A-HJ-NP-Za-km-z]+$',
              description: "The agent's Ed25519 public key, multibase base58btc (z6Mk…).",
            },
          },
          required: ['agentPublicKey'],
        },
        body: {
          type: 'object',
          properties: {
            reason: {
              type: 'string',
              minLength: 1,
              maxLength: MAX_KILL_REASON_LENGTH,
              description: 'Why the agent is killed; recorded on the kill and in the audit trail.',
            },
          },
          required: ['reason'],
          additionalProperties: false,
        },
        response: {
          200: killAnswerSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
      validatorCompiler: validateKillRequest,
    },
    (request, reply) => killAgent(deps, request, reply),
  );
}

async function killAgent(
  deps: KillRoutesDependencies,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<KillAnswer> {
  const { tenant, key } = request.auth!;
  const outcome = await deps.killSwitch.kill({
    tenantId: tenant.id,
    target: { publicKey: (request.params as KillParams).agentPublicKey },
    reason: (request.body as KillBody).reason,
    actor: `api_key:${key.id}`,
  });
  reply.header('cache-control', 'no-store');
  return outcome.answer;
}

interface KillParams {
  readonly agentPublicKey: string;
}

const killBodySchema = z.strictObject({
  reason: z
    .string()
    .refine((reason) => reason.trim().length > 0, 'must not be empty or blank')
    .refine(
      (reason) => reason.length <= MAX_KILL_REASON_LENGTH,
      `must be at most ${MAX_KILL_REASON_LENGTH} characters`,
    )
    .refine(isStorableText, UNSTORABLE_TEXT),
});

type KillBody = z.output<typeof killBodySchema>;

const validateBody = compileBodyValidator(killBodySchema);

/** The path key, then the body: the order a refusal names them in. */
const validateKillRequest: ValidatorCompiler = (route) => {
  if (route.httpPart !== 'params') return validateBody(route);
  return (params) => {
    const problem = publicKeyProblem((params as KillParams).agentPublicKey);
    return problem === undefined ? { value: params } : { error: problem };
  };
};

function publicKeyProblem(value: string): GatewayError | undefined {
  if (value.length > MAX_KEY_LENGTH || !value.startsWith('z6Mk') || !isEd25519PublicKey(value)) {
    return invalidField(
      'agentPublicKey',
      'must be an Ed25519 public key in the z6Mk… multibase form (as in did:key)',
    );
  }
  return undefined;
}
