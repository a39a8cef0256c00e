// POST /oauth/register (RFC 7591 dynamic client registration, scope agents:manage): registers
// an OAuth client for an agent of the caller's tenant, the REST twin of the registerOAuthClient
// mutation. The request is RFC 7591 client metadata plus `agent_id` and `resources`
// (shared/oauth/client-metadata.ts is the one contract: the route documents it in OpenAPI and
// enforces it); the answer is 201 with client_id, the secret once, and the registered metadata,
// in the RFC's snake_case. Refusals of the metadata are RFC 7591 bodies `{ error:
// invalid_client_metadata | invalid_redirect_uri, error_description }`, 400, and write nothing;
// the API key is checked by the composition's `authenticate` before the body is read, and its
// refusals (401, 403) are the gateway's own error bodies like every management route's. The
// snapshot with the new client is applied before the answer, so the token endpoint knows it.
import type { FastifyError, FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errorBodySchema, GatewayError, gatewayError } from '../../shared/errors/index.js';
import { SCOPES } from '../../shared/identity/scopes.js';
import {
  type ClientMetadata,
  clientMetadataIssues,
  clientMetadataSchema,
  responseTypesOf,
  toClientMetadata,
} from '../../shared/oauth/client-metadata.js';
import {
  buildOAuthErrorBody,
  OAUTH_REGISTRATION_ERRORS,
  oauthErrorBodySchema,
} from '../../shared/oauth/errors.js';
import { compileBodyValidator } from '../../shared/validation/body-validator.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import { actorOf, type Caller } from '../graphql/context.js';
import {
  type RegisteredOAuthClient,
  registerOAuthClient,
  registrationRefused,
} from '../services/oauth-clients.js';
import type { SnapshotPublisher } from '../snapshot/publisher.js';
import { scopedCaller } from './scoped-caller.js';

export const OAUTH_REGISTER_PATH = '/oauth/register';
export const OAUTH_REGISTER_DOCS = 'docs/oauth.md#registering-a-client-rfc-7591';

export interface OAuthRegisterDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly publisher: Pick<SnapshotPublisher, 'publishNow'>;
  readonly authenticate: (authorization: string | undefined) => Caller;
}

const registeredAnswerSchema = {
  type: 'object',
  description: 'The registered client (RFC 7591 §3.2.1): its credentials and accepted metadata.',
  properties: {
    client_id: { type: 'string', description: '`agc_` + 22 base64url characters.' },
    client_secret: {
      type: 'string',
      description:
        'Only for client_secret_basic and client_secret_post: 43 base64url characters, shown ' +
        'this once (the gateway keeps only its SHA-256).',
    },
    client_id_issued_at: { type: 'integer', description: 'Seconds since the epoch.' },
    client_secret_expires_at: {
      type: 'integer',
      description: '0 (the secret does not expire); present when a secret is issued.',
    },
    client_name: { type: 'string' },
    grant_types: { type: 'array', items: { type: 'string' } },
    response_types: { type: 'array', items: { type: 'string' } },
    token_endpoint_auth_method: { type: 'string' },
    redirect_uris: { type: 'array', items: { type: 'string' } },
    agent_id: { type: 'string', description: 'The agent the client acts as.' },
    resources: {
      type: 'array',
      items: { type: 'string' },
      description: 'mcp://{serverId} resources the client may obtain tokens for.',
    },
  },
  required: [
    'client_id',
    'client_id_issued_at',
    'client_name',
    'grant_types',
    'response_types',
    'token_endpoint_auth_method',
    'redirect_uris',
    'agent_id',
    'resources',
  ],
} as const;

export async function oauthRegisterRoutes(
  app: FastifyInstance,
  deps: OAuthRegisterDependencies,
): Promise<void> {
  // JSON only (RFC 7591 §3.1): a text/plain body is 415, not a string the schema then refuses.
  app.removeContentTypeParser('text/plain');
  // Metadata refusals are RFC 7591 bodies; everything else (the API key, media type, size) goes
  // to the app's error handler, which answers the gateway's error body.
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const refusal = registrationRefusalOf(error);
    if (refusal === undefined) throw error;
    return reply
      .code(refusal.status ?? 400)
      .header('cache-control', 'no-store')
      .header('pragma', 'no-cache')
      .send(
        buildOAuthErrorBody('OAUTH_INVALID_REQUEST', refusal.message, {
          ...refusal.details,
          docs: OAUTH_REGISTER_DOCS,
        }),
      );
  });
  const manager = scopedCaller(deps.authenticate, SCOPES.AGENTS_MANAGE);
  const { $schema: _dialect, ...bodyJsonSchema } = z.toJSONSchema(clientMetadataSchema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  });
  app.post<{ Body: ClientMetadata }>(
    OAUTH_REGISTER_PATH,
    {
      onRequest: manager.onRequest,
      config: { docs: OAUTH_REGISTER_DOCS },
      schema: {
        operationId: 'registerOAuthClient',
        summary: 'Register an OAuth client for an agent (RFC 7591).',
        body: bodyJsonSchema,
        response: {
          201: registeredAnswerSchema,
          400: oauthErrorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          415: errorBodySchema,
        },
      },
      validatorCompiler: compileBodyValidator(clientMetadataSchema, {
        refuse: (error) => registrationRefused(clientMetadataIssues(error)),
        after: toClientMetadata,
      }),
    },
    async (request, reply) => {
      const caller = manager.callerOf(request);
      const registered = await registerOAuthClient(
        { db: deps.db, audit: deps.audit },
        { tenantId: caller.tenantId, metadata: request.body, actor: actorOf(caller) },
      );
      await deps.publisher.publishNow();
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .header('pragma', 'no-cache')
        .send(registeredClientAnswer(registered));
    },
  );
}

/** The RFC 7591 §3.2.1 answer: the credentials and the metadata as registered. */
function registeredClientAnswer({ client, clientSecret }: RegisteredOAuthClient) {
  return {
    client_id: client.id,
    ...(clientSecret === null ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 }),
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    client_name: client.name,
    grant_types: client.grantTypes,
    response_types: responseTypesOf(client.grantTypes),
    token_endpoint_auth_method: client.authMethod,
    redirect_uris: client.redirectUris,
    agent_id: client.agentId,
    resources: client.audiences,
  };
}

/** A registration refusal (ours, or a body that is not JSON); undefined for anything else. */
function registrationRefusalOf(error: FastifyError): GatewayError | undefined {
  if (error instanceof GatewayError) {
    return error.code === 'OAUTH_INVALID_REQUEST' ? error : undefined;
  }
  if (
    error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
  ) {
    return gatewayError(
      'OAUTH_INVALID_REQUEST',
      { problem: 'the body must be a JSON object of client metadata' },
      {
        details: {
          oauthError: OAUTH_REGISTRATION_ERRORS.INVALID_CLIENT_METADATA,
          issues: [{ field: '(body)', message: 'must be a JSON object of client metadata' }],
        },
      },
    );
  }
  return undefined;
}
