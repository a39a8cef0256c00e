// The OAuth authorization server on the data plane (DESIGN.md §6, §6a; docs/oauth.md): RFC 8414
// discovery and the JWKS (public), the authorization endpoint (an agent-identity proof instead of
// a browser login, no API key), the token endpoint (client_credentials, authorization_code with
// PKCE), introspection
// (RFC 7662) and revocation (RFC 7009). Every answer of these routes that is an error is an
// RFC 6749 body (`{ error, error_description }`, Cache-Control: no-store), rendered by this
// plugin's own error handler; client registration is the control plane's (POST /oauth/register).
import type { FastifyError, FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { toGatewayError } from '../../../http-edge/errors.js';
import type { EventBus } from '../../../shared/events/index.js';
import { oauthErrorBodySchema } from '../../../shared/oauth/errors.js';
import type { PublicUrl } from '../../../shared/public-url.js';
import type { Database } from '../../../storage/engine/database.js';
import type { AuditWriter } from '../../../storage/tables/audit-writer.js';
import type { IdentityVerifier } from '../../agentiam/identity-verifier.js';
import type { GatewayMetrics } from '../../metrics/gateway-metrics.js';
import { AuthFailureLimiter, type AuthFailureLimits } from '../../oauth/auth-failure-limiter.js';
import { AuthorizationCodes } from '../../oauth/authorization-codes.js';
import { ClientAuthenticator } from '../../oauth/client-auth.js';
import type { IssuedTokenRecorder } from '../../oauth/issued-tokens.js';
import { MetadataDocumentAuthenticator } from '../../oauth/metadata-document-auth.js';
import type { MetadataDocuments } from '../../oauth/metadata-documents.js';
import { parseFormParams } from '../../oauth/request-params.js';
import { RevokedTokens } from '../../oauth/revocations.js';
import { sendOAuthError } from '../../oauth/rfc-errors.js';
import type { TokenSigner } from '../../oauth/token-signer.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { authorize } from './authorize.js';
import { createOAuthContext } from './context.js';
import {
  AUTHORIZE_PATH,
  DISCOVERY_PATH,
  INTROSPECT_PATH,
  JWKS_PATH,
  REVOKE_PATH,
  serveJwks,
  serveMetadata,
  TOKEN_PATH,
} from './discovery.js';
import { introspectToken, revokeToken } from './introspect-revoke.js';
import { issueToken } from './token.js';

export interface OAuthRoutesDependencies {
  readonly store: SnapshotStore;
  readonly publicUrl: PublicUrl;
  /** Revocation writes IssuedToken.revokedAt and bumps the tenant's configVersion. */
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  /**
   * This process's token signer: its key is served in the JWKS even before a snapshot names it.
   * Without one the token endpoint cannot issue (temporarily_unavailable).
   */
  readonly signer?: TokenSigner | undefined;
  /** Records issued tokens (IssuedToken rows) off the request path. */
  readonly issuedTokens?: Pick<IssuedTokenRecorder, 'record'> | undefined;
  /** Failed client authentications per client id and address (production defaults). */
  readonly authFailureLimits?: AuthFailureLimits | undefined;
  /** Tokens issued, client authentications refused. */
  readonly metrics?: Pick<GatewayMetrics, 'oauthTokensIssued' | 'oauthClientAuthFailures'>;
  /** The jtis this process revoked (shared with the forwarding token cache). */
  readonly revoked?: RevokedTokens | undefined;
  /** Where a revocation is announced to the other data planes (`revocation.committed`). */
  readonly events?: Pick<EventBus, 'publish'> | undefined;
  /**
   * The data plane's AgentIAM verifier (credential chains, Agent-Proof jti store): the
   * authorization endpoint verifies the agent with it. Without one it is temporarily_unavailable.
   */
  readonly identity?: IdentityVerifier | undefined;
  /** Authorization codes of this process (default: a new store). */
  readonly authorizationCodes?: AuthorizationCodes | undefined;
  /** Client ID metadata documents (absent: a URL client_id is an unknown client). */
  readonly metadataDocuments?: MetadataDocuments | undefined;
}

/** Largest accepted OAuth request body: parameters, never documents. */
const BODY_LIMIT_BYTES = 16 * 1024;

export const oauthRoutes = fastifyPlugin(registerOAuthRoutes, {
  name: 'agent-gateway-oauth',
  dependencies: ['agent-gateway-errors'],
  encapsulate: true,
});

const oauthErrorBody = {
  ...oauthErrorBodySchema,
  description: 'An RFC 6749 error: { error, error_description }.',
};
/** Every refusal of the client-authenticated endpoints is an RFC 6749 body, the edge's too. */
const oauthErrors = {
  400: oauthErrorBody,
  401: oauthErrorBody,
  413: oauthErrorBody,
  415: oauthErrorBody,
  429: oauthErrorBody,
};

const documentResponse = (description: string, mediaType: string) => ({
  200: {
    description,
    content: { [mediaType]: { schema: { type: 'object', additionalProperties: true } } },
  },
});

async function registerOAuthRoutes(
  app: FastifyInstance,
  deps: OAuthRoutesDependencies,
): Promise<void> {
  app.setErrorHandler((error, request, reply) => {
    const mapped = toGatewayError(error as FastifyError, request);
    if (mapped.code === 'INTERNAL_ERROR') request.log.error({ err: error }, 'unexpected error');
    return sendOAuthError(reply, mapped);
  });
  // RFC 6749 §3.2: the token endpoint takes form parameters (JSON is accepted too).
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES },
    (_request, body, done) => done(null, parseFormParams(body as string)),
  );
  const ctx = createOAuthContext({
    store: deps.store,
    publicUrl: deps.publicUrl,
    signer: deps.signer,
    issuedTokens: deps.issuedTokens,
    metrics: deps.metrics,
    clients: new ClientAuthenticator(new AuthFailureLimiter(deps.authFailureLimits)),
  });
  app.get(
    DISCOVERY_PATH,
    {
      schema: {
        operationId: 'getOAuthAuthorizationServerMetadata',
        summary: 'OAuth 2.0 authorization server metadata (RFC 8414), public.',
        response: documentResponse('The metadata document.', 'application/json'),
      },
    },
    (_request, reply) => serveMetadata(deps.publicUrl, reply),
  );
  app.get(
    JWKS_PATH,
    {
      schema: {
        operationId: 'getOAuthJwks',
        summary: 'The public keys that sign access tokens (JWKS, RFC 7517), public.',
        response: documentResponse('The JSON Web Key Set.', 'application/jwk-set+json'),
      },
    },
    (_request, reply) => serveJwks(deps.store, deps.signer, reply),
  );
  const codes = deps.authorizationCodes ?? new AuthorizationCodes();
  const documentClients =
    deps.metadataDocuments === undefined
      ? undefined
      : new MetadataDocumentAuthenticator(deps.metadataDocuments);
  const authorizeDeps = {
    identity: deps.identity,
    codes,
    metadataDocuments: deps.metadataDocuments,
    records: { db: deps.db, audit: deps.audit },
  };
  const revoked = deps.revoked ?? new RevokedTokens();
  const revocation = { db: deps.db, audit: deps.audit, revoked, events: deps.events };
  const authorizeSchema = {
    operationId: 'authorizeOAuthClient',
    summary:
      "OAuth authorization endpoint (RFC 6749 §4.1, PKCE S256): the agent proves its identity (agent_credential, agent_proof) instead of a browser login; no API key. 302 to the client's redirect URI with a code or an error.",
    response: {
      302: {
        description: 'To the redirect URI, with code and state, or error and state.',
        type: 'null',
      },
      400: {
        ...oauthErrorBody,
        description: 'Unknown client_id or unregistered redirect_uri (never redirected).',
      },
      413: oauthErrorBody,
      415: oauthErrorBody,
    },
  };
  app.get(
    AUTHORIZE_PATH,
    { schema: { ...authorizeSchema, operationId: 'authorizeOAuthClientGet' } },
    (request, reply) => authorize(ctx, authorizeDeps, request, reply),
  );
  app.post(
    AUTHORIZE_PATH,
    { bodyLimit: BODY_LIMIT_BYTES, schema: authorizeSchema },
    (request, reply) => authorize(ctx, authorizeDeps, request, reply),
  );
  app.post(
    TOKEN_PATH,
    {
      bodyLimit: BODY_LIMIT_BYTES,
      schema: {
        operationId: 'issueOAuthToken',
        summary:
          'OAuth token endpoint (RFC 6749): client_credentials for one RFC 8707 resource, or authorization_code with PKCE; client authentication by secret (Basic or form) or private_key_jwt.',
        response: {
          200: {
            description: 'An RFC 9068 access token.',
            type: 'object',
            properties: {
              access_token: { type: 'string' },
              token_type: { type: 'string' },
              expires_in: { type: 'integer' },
              scope: { type: 'string' },
            },
            required: ['access_token', 'token_type', 'expires_in'],
          },
          ...oauthErrors,
          503: {
            ...oauthErrorBody,
            description: 'This process has no token signing key (temporarily_unavailable).',
          },
        },
      },
    },
    (request, reply) => issueToken(ctx, { codes, revocation, documentClients }, request, reply),
  );
  app.post(
    INTROSPECT_PATH,
    {
      bodyLimit: BODY_LIMIT_BYTES,
      schema: {
        operationId: 'introspectOAuthToken',
        summary:
          'Token introspection (RFC 7662) for a client of the same tenant: active only while the token is good.',
        response: {
          200: {
            description: 'Whether the token is active, and its claims when it is.',
            type: 'object',
            properties: {
              active: { type: 'boolean' },
              scope: { type: 'string' },
              client_id: { type: 'string' },
              token_type: { type: 'string' },
              exp: { type: 'integer' },
              iat: { type: 'integer' },
              sub: { type: 'string' },
              aud: { type: 'string' },
              iss: { type: 'string' },
              jti: { type: 'string' },
              tenant_id: { type: 'string' },
              act: {
                type: 'object',
                description: 'RFC 8693 actor claim: the delegation chain of a delegate token.',
                additionalProperties: true,
              },
            },
            required: ['active'],
          },
          ...oauthErrors,
        },
      },
    },
    (request, reply) => introspectToken(ctx, revoked, request, reply),
  );
  app.post(
    REVOKE_PATH,
    {
      bodyLimit: BODY_LIMIT_BYTES,
      schema: {
        operationId: 'revokeOAuthToken',
        summary:
          "Token revocation (RFC 7009) of a token of the client's tenant; always 200 once the client authenticated.",
        response: {
          200: { description: 'Revoked, or nothing to revoke.', type: 'object' },
          ...oauthErrors,
        },
      },
    },
    (request, reply) => revokeToken(ctx, revocation, request, reply),
  );
}
