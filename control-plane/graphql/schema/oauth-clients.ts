// OAuth clients on the management API: register one for an agent (the twin of POST
// /oauth/register, same rules: shared/oauth/client-metadata.ts and the database checks of
// control-plane/services/oauth-clients.ts), revoke one, list the tenant's. The secret is in the
// registration payload once; no field ever exposes it or its hash. Refusals of the metadata are
// OAUTH_INVALID_REQUEST with the RFC 7591 error string in `extensions.details.oauthError` and
// the fields named as RFC 7591 names them (`redirect_uris.0`). Each write is audited in the
// service and published here, so the data plane's token endpoint knows the change at once.

import { gatewayError } from '../../../shared/errors/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import {
  CLIENT_NAME_MAX,
  CLIENT_RESOURCES_MAX,
  parseClientMetadata,
  REDIRECT_URIS_MAX,
} from '../../../shared/oauth/client-metadata.js';
import {
  type OAuthClientAuthMethod,
  STORED_OAUTH_CLIENT_AUTH_METHODS,
} from '../../../shared/snapshot/types.js';
import {
  type OAuthClientServiceDependencies,
  type RegisteredOAuthClient,
  registerOAuthClient,
  registrationRefused,
  revokeOAuthClient,
} from '../../services/oauth-clients.js';
import { builder } from '../builder.js';
import { actorOf, type GraphQLContext } from '../context.js';
import { toGraphQLError } from '../errors.js';
import { publishChange } from '../mutations.js';

const AUTH_METHOD_DESCRIPTIONS: Record<OAuthClientAuthMethod, string> = {
  client_secret_basic:
    'A secret, sent with HTTP Basic (RFC 6749 §2.3.1); the form (client_secret_post) works too.',
  client_secret_post: 'A secret, sent in the token request form; HTTP Basic works too.',
  private_key_jwt:
    "No secret: an RFC 7523 client assertion (EdDSA) signed by the agent's own Ed25519 key.",
  none: "A client ID metadata document client (metadataUrl) without client authentication: PKCE and the agent's identity proof at /oauth/authorize bind its code (such a client's document may also say PRIVATE_KEY_JWT, with its own keys).",
};

const AuthMethodEnum = builder.enumType('OAuthClientAuthMethod', {
  description: 'How a client authenticates at the token endpoint (token_endpoint_auth_method).',
  values: Object.fromEntries(
    STORED_OAUTH_CLIENT_AUTH_METHODS.map((method) => [
      method.toUpperCase(),
      { value: method, description: AUTH_METHOD_DESCRIPTIONS[method] },
    ]),
  ) as Record<
    Uppercase<OAuthClientAuthMethod>,
    { value: OAuthClientAuthMethod; description: string }
  >,
});

const OAuthClientRef = builder.prismaObject('OAuthClient', {
  description:
    'An OAuth client (RFC 7591) acting as one agent of the tenant: it obtains access tokens ' +
    'at the token endpoint for the MCP servers it lists. Its secret is never readable.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The client_id: `agc_` + 22 base64url characters.' }),
    name: t.exposeString('name', { description: 'Name shown to operators (client_name).' }),
    metadataUrl: t.exposeString('metadataUrl', {
      nullable: true,
      description:
        'For a client ID metadata document client: the https URL that is its client_id (the id field is the record of it for this agent); null for a registered client.',
    }),
    agentId: t.exposeString('agentId', { description: 'The Agent.id the client acts as.' }),
    agent: t.relation('agent', { description: 'The agent the client acts as.' }),
    tokenEndpointAuthMethod: t.field({
      type: AuthMethodEnum,
      description: 'How it authenticates at the token endpoint.',
      select: { authMethod: true },
      resolve: (client) => client.authMethod as OAuthClientAuthMethod,
    }),
    hasSecret: t.boolean({
      description: 'Whether a secret was issued (false for private_key_jwt).',
      select: { secretHash: true },
      resolve: (client) => client.secretHash !== null,
    }),
    grantTypes: t.exposeStringList('grantTypes', {
      description: 'Grant types it may use: client_credentials.',
    }),
    redirectUris: t.exposeStringList('redirectUris', {
      description: 'Redirect URIs, exact strings as registered.',
    }),
    resources: t.exposeStringList('audiences', {
      description: 'The mcp://{serverId} resources it may obtain tokens for.',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was registered (client_id_issued_at).',
    }),
    revokedAt: t.expose('revokedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it was revoked; null while it may obtain tokens.',
    }),
  }),
});

builder.queryField('oauthClients', (t) =>
  t.prismaConnection({
    type: 'OAuthClient',
    cursor: 'id',
    description:
      "OAuth clients of the caller's tenant, newest first; revoked ones only when asked. At " +
      'most 100 per page.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      agentId: t.arg.id({ description: 'Only the clients of this agent.' }),
      includeRevoked: t.arg.boolean({
        description: 'Also the revoked clients. Default: false.',
      }),
    },
    resolve: (query, _root, args, context) =>
      context.db.prisma.oAuthClient.findMany({
        ...query,
        where: {
          tenantId: context.caller.tenantId,
          ...(args.agentId ? { agentId: String(args.agentId) } : {}),
          ...(args.includeRevoked ? {} : { revokedAt: null }),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      }),
  }),
);

const RegisterOAuthClientInput = builder.inputType('RegisterOAuthClientInput', {
  description:
    'RFC 7591 client metadata in camelCase, plus the agent and its resources (the rules of ' +
    'POST /oauth/register).',
  fields: (t) => ({
    agentId: t.id({
      required: true,
      description: 'The agent (Agent.id) the client acts as: active, of the tenant.',
    }),
    clientName: t.string({
      description: `Name shown to operators (client_name), 1-${CLIENT_NAME_MAX} characters. Default: the agent's name.`,
    }),
    grantTypes: t.stringList({
      description:
        'Grant types (grant_types): client_credentials (the default), authorization_code (PKCE; needs redirectUris), or both.',
    }),
    tokenEndpointAuthMethod: t.field({
      type: AuthMethodEnum,
      description:
        'How it authenticates (token_endpoint_auth_method). Default: CLIENT_SECRET_BASIC. NONE is for client ID metadata document clients, which are not registered (REQUEST_INVALID).',
    }),
    redirectUris: t.stringList({
      description: `Redirect URIs (redirect_uris): at most ${REDIRECT_URIS_MAX}, https or http on 127.0.0.1, [::1] or localhost, no fragment; kept as exact strings.`,
    }),
    scope: t.string({
      description:
        'Scope (scope): space-separated tokens (RFC 6749 §3.3); checked, not registered.',
    }),
    resources: t.stringList({
      description: `The mcp://{serverId} resources it may obtain tokens for, each in the agent's mcpAudiences, at most ${CLIENT_RESOURCES_MAX}. Default: all the agent's mcpAudiences.`,
    }),
  }),
});

const RegisteredPayloadRef = builder
  .objectRef<RegisteredOAuthClient>('RegisterOAuthClientPayload')
  .implement({
    description: 'A registered client and, once, its secret.',
    fields: (t) => ({
      client: t.field({
        type: OAuthClientRef,
        description: 'The registered client.',
        resolve: (payload) => payload.client,
      }),
      clientSecret: t.string({
        nullable: true,
        description:
          'The client_secret, shown this once (the gateway keeps only its SHA-256); null for ' +
          'private_key_jwt.',
        resolve: (payload) => payload.clientSecret,
      }),
    }),
  });

function servicesOf(context: GraphQLContext): OAuthClientServiceDependencies {
  return { db: context.db, audit: context.audit };
}

builder.mutationField('registerOAuthClient', (t) =>
  t.field({
    type: RegisteredPayloadRef,
    description:
      'Registers an OAuth client for an active agent of the tenant (the REST twin is POST ' +
      '/oauth/register, RFC 7591). The token endpoint knows it when this answers. Refusals: ' +
      'OAUTH_INVALID_REQUEST with extensions.details.oauthError invalid_client_metadata or ' +
      'invalid_redirect_uri. Audited as oauth.client_registered.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      input: t.arg({
        type: RegisterOAuthClientInput,
        required: true,
        description: 'The client metadata.',
      }),
    },
    resolve: async (_root, { input }, context) => {
      if (input.tokenEndpointAuthMethod === 'none') {
        throw toGraphQLError(
          gatewayError('REQUEST_INVALID', {
            problem:
              'tokenEndpointAuthMethod NONE is for client ID metadata document clients, which are not registered (docs/oauth.md); use CLIENT_SECRET_BASIC, CLIENT_SECRET_POST or PRIVATE_KEY_JWT',
          }),
        );
      }
      const parsed = parseClientMetadata(
        Object.fromEntries(
          Object.entries({
            agent_id: String(input.agentId),
            client_name: input.clientName,
            grant_types: input.grantTypes,
            token_endpoint_auth_method: input.tokenEndpointAuthMethod,
            redirect_uris: input.redirectUris,
            scope: input.scope,
            resources: input.resources,
          }).filter(([, value]) => value !== null && value !== undefined),
        ),
      );
      if (!parsed.success) throw registrationRefused(parsed.issues);
      const registered = await registerOAuthClient(servicesOf(context), {
        tenantId: context.caller.tenantId,
        metadata: parsed.metadata,
        actor: actorOf(context.caller),
      });
      await publishChange(context);
      return registered;
    },
  }),
);

builder.mutationField('revokeOAuthClient', (t) =>
  t.prismaField({
    type: 'OAuthClient',
    description:
      'Revokes an OAuth client of the tenant: it authenticates no more and introspection ' +
      'answers its tokens inactive, from the snapshot published before this answers. Revoking ' +
      'a revoked client changes nothing. NOT_FOUND when the tenant has no such client. ' +
      'Audited as oauth.client_revoked.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      clientId: t.arg.id({ required: true, description: 'The client_id.' }),
    },
    resolve: async (query, _root, args, context) => {
      const { client, revoked } = await revokeOAuthClient(servicesOf(context), {
        tenantId: context.caller.tenantId,
        clientId: String(args.clientId),
        actor: actorOf(context.caller),
      });
      if (revoked) await publishChange(context);
      return context.db.prisma.oAuthClient.findUniqueOrThrow({
        ...query,
        where: { id: client.id },
      });
    },
  }),
);
