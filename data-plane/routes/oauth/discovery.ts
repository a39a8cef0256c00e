// RFC 8414 authorization server metadata and the JWKS (RFC 7517) of the access-token signing
// keys: both public and cacheable. The metadata names what is served: client_credentials and
// authorization_code (PKCE S256 only, the authorization step an agent-identity proof) at the
// token endpoint, the authorization endpoint with response type code, and the `iss` parameter
// of authorization responses (RFC 9207), and client ID metadata documents (a client_id that is an
// https URL, with no registration: docs/oauth.md).
import type { FastifyReply } from 'fastify';
import type { PublicUrl } from '../../../shared/public-url.js';
import { type OwnSigningKey, oauthIndexOf } from '../../oauth/oauth-index.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';

export const DISCOVERY_PATH = '/.well-known/oauth-authorization-server';
export const JWKS_PATH = '/oauth/jwks';
export const TOKEN_PATH = '/oauth/token';
export const INTROSPECT_PATH = '/oauth/introspect';
export const REVOKE_PATH = '/oauth/revoke';
export const AUTHORIZE_PATH = '/oauth/authorize';
/** Served by the control plane (POST /oauth/register). */
export const REGISTER_PATH = '/oauth/register';

export const CLIENT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
] as const;

export function buildMetadata(issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}${AUTHORIZE_PATH}`,
    token_endpoint: `${issuer}${TOKEN_PATH}`,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    registration_endpoint: `${issuer}${REGISTER_PATH}`,
    introspection_endpoint: `${issuer}${INTROSPECT_PATH}`,
    revocation_endpoint: `${issuer}${REVOKE_PATH}`,
    grant_types_supported: ['client_credentials', 'authorization_code'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    scopes_supported: [],
    // `none`: client ID metadata document clients (PKCE and the agent's identity proof).
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS, 'none'],
    client_id_metadata_document_supported: true,
    token_endpoint_auth_signing_alg_values_supported: ['EdDSA'],
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    introspection_endpoint_auth_signing_alg_values_supported: ['EdDSA'],
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_signing_alg_values_supported: ['EdDSA'],
  };
}

let cached: { issuer: string; body: string } | undefined;

export function serveMetadata(publicUrl: PublicUrl, reply: FastifyReply): FastifyReply {
  const issuer = publicUrl.get();
  if (cached?.issuer !== issuer) cached = { issuer, body: JSON.stringify(buildMetadata(issuer)) };
  return reply
    .header('cache-control', 'public, max-age=300')
    .type('application/json')
    .send(cached.body);
}

export function serveJwks(
  store: SnapshotStore,
  ownKey: OwnSigningKey | undefined,
  reply: FastifyReply,
): FastifyReply {
  // Shorter than the metadata's: a data plane that joins publishes its key here.
  return reply
    .header('cache-control', 'public, max-age=60')
    .type('application/jwk-set+json')
    .send(oauthIndexOf(store.current, ownKey).jwks);
}
