// The OAuth authorization server on the data plane (DESIGN.md §6, §6a; docs/oauth.md): RFC 8414
// discovery and the JWKS (public), the token endpoint (client_credentials), introspection
// (RFC 7662) and revocation (RFC 7009). Every answer of these routes that is an error is an
// RFC 6749 body (`{ error, error_description }`, Cache-Control: no-store), rendered by this
// plugin's own error handler; client registration is the control plane's (POST /oauth/register).
import type { FastifyError, FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { PublicUrl } from '../../../shared/public-url.js';
import type { OwnSigningKey } from '../../oauth/oauth-index.js';
import { sendOAuthError } from '../../oauth/rfc-errors.js';
import { toGatewayError } from '../../plugins/errors.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { DISCOVERY_PATH, JWKS_PATH, serveJwks, serveMetadata } from './discovery.js';

export interface OAuthRoutesDependencies {
  readonly store: SnapshotStore;
  readonly publicUrl: PublicUrl;
  /** This process's signing key, served in the JWKS even before a snapshot names it. */
  readonly ownKey?: OwnSigningKey | undefined;
}

export const oauthRoutes = fastifyPlugin(registerOAuthRoutes, {
  name: 'agent-gateway-oauth',
  dependencies: ['agent-gateway-errors'],
  encapsulate: true,
});

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
    const mapped = toGatewayError(error as FastifyError);
    if (mapped.code === 'INTERNAL_ERROR') request.log.error({ err: error }, 'unexpected error');
    return sendOAuthError(reply, mapped);
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
    (_request, reply) => serveJwks(deps.store, deps.ownKey, reply),
  );
}
