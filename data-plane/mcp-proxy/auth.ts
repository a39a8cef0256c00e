// Who is calling the MCP proxy (issue 14 item 2, DESIGN.md §6):
// - an access token of this gateway whose audience is this proxy resource,
//   `<public URL>/mcp/{serverId}`: never an `mcp://{serverId}` token, which is what upstreams
//   receive, so an upstream cannot replay what it was given against the proxy. Checked like
//   introspection checks a token: signature by kid against the snapshot's JWKS, EdDSA, at+jwt,
//   our issuer, unexpired, not revoked (snapshot or this process), its client not revoked, its
//   agent alive;
// - or, for trusted backends, an `agents:execute` API key and the agent named by `X-Agent-Id`.
// Every failure is 401 with `WWW-Authenticate: Bearer resource_metadata=…` (RFC 9728 §5.1), so
// an MCP client discovers the authorization server by itself; a key without the scope is 403.
// The challenge's `error` follows RFC 6750 §3.1: none when the request carried no bearer
// credentials (no header, another scheme), `invalid_request` when they are malformed or the key
// lacks its X-Agent-Id, `invalid_token` when the token itself is refused.

import { type GatewayError, gatewayError } from '../../shared/errors/index.js';
import { SCOPES } from '../../shared/identity/scopes.js';
import { type AgentId, asAgentId, type TenantId } from '../../shared/ids.js';
import type { OAuthIndex } from '../oauth/oauth-index.js';
import type { RevokedTokens } from '../oauth/revocations.js';
import { type VerifiedAccessToken, verifyAccessToken } from '../oauth/verify-access-token.js';
import type { ApiKeyAuthenticator } from '../plugins/auth.js';

/** The client id of tokens the gateway mints for itself (never accepted by the proxy). */
const GATEWAY_CLIENT_ID = 'gateway';
const BEARER = /^Bearer ([^\s]+)$/i;
const BEARER_SCHEME = /^Bearer(\s|$)/i;
const API_KEY_PREFIX = 'agk_';
const AGENT_ID = /^[A-Za-z0-9._:-]{1,200}$/;

export interface ProxyCaller {
  readonly tenantId: TenantId;
  readonly agentId: AgentId;
  readonly via: 'access_token' | 'api_key';
  /** The token was obtained with proof of the agent's identity (private_key_jwt, agent proof). */
  readonly identityProven: boolean;
}

/** What checks an access token; API keys are the auth plugin's (`app.authenticateApiKey`). */
export interface ProxyAuthDependencies {
  readonly issuer: () => string;
  readonly index: () => OAuthIndex;
  readonly revoked: RevokedTokens;
}

export interface PresentedCredentials {
  readonly authorization: string | undefined;
  readonly agentIdHeader: string | undefined;
}

/** The proxy resource of a server: the audience a token must carry. */
export function proxyResource(issuer: string, serverId: string): string {
  return `${issuer}/mcp/${serverId}`;
}

/** The RFC 9728 metadata URL of a server's proxy resource. */
export function resourceMetadataUrl(issuer: string, serverId: string): string {
  return `${issuer}/.well-known/oauth-protected-resource/mcp/${serverId}`;
}

/** The RFC 6750 §3.1 error code of a refusal; null when the request lacked authentication. */
type BearerError = 'invalid_request' | 'invalid_token' | null;

/**
 * The `WWW-Authenticate` value of a proxy 401. A refusal of authenticateCaller says its error
 * code; any other 401 (an unknown or revoked API key) refused a credential that was presented.
 */
export function proxyChallenge(error: GatewayError, issuer: string, serverId: string): string {
  const stated = error.details?.bearerError;
  const bearerError: BearerError =
    stated === null || stated === 'invalid_request' ? stated : 'invalid_token';
  const metadata = `resource_metadata="${resourceMetadataUrl(issuer, serverId)}"`;
  return bearerError === null ? `Bearer ${metadata}` : `Bearer error="${bearerError}", ${metadata}`;
}

/**
 * Tokens whose signature and claims verified against an index (one per applied snapshot): an MCP
 * client presents the same token on every message, and an EdDSA verification (about 60 µs) was
 * the largest part of a proxied call's own cost. Keyed by the index, so a new snapshot (a removed
 * signing key, say) verifies again; entries end with their token's `exp`; bounded.
 */
const verifiedTokens = new WeakMap<OAuthIndex, Map<string, VerifiedAccessToken>>();
const MAX_CACHED_TOKENS = 10_000;

async function verifiedClaims(
  index: OAuthIndex,
  token: string,
  issuer: string,
): Promise<VerifiedAccessToken | undefined> {
  let cache = verifiedTokens.get(index);
  const cached = cache?.get(token);
  if (cached && cached.iss === issuer && cached.exp * 1000 > Date.now()) return cached;
  const claims = await verifyAccessToken(index, token, issuer);
  if (!claims) return undefined;
  if (!cache) {
    cache = new Map();
    verifiedTokens.set(index, cache);
  }
  if (cache.size >= MAX_CACHED_TOKENS) cache.clear();
  cache.set(token, claims);
  return claims;
}

export async function authenticateCaller(
  deps: ProxyAuthDependencies,
  authenticateApiKey: ApiKeyAuthenticator,
  presented: PresentedCredentials,
  serverId: string,
): Promise<ProxyCaller> {
  const issuer = deps.issuer();
  const resource = proxyResource(issuer, serverId);
  const refuse = (problem: string, bearerError: BearerError = 'invalid_token'): GatewayError =>
    gatewayError('MCP_PROXY_UNAUTHORIZED', { resource, problem }, { details: { bearerError } });
  const token = presented.authorization ? BEARER.exec(presented.authorization)?.[1] : undefined;
  if (token === undefined) {
    const malformed = BEARER_SCHEME.test(presented.authorization ?? '');
    throw refuse(
      malformed ? 'the bearer credentials are malformed' : 'no bearer token was presented',
      malformed ? 'invalid_request' : null,
    );
  }
  // API keys read `agk_…`; access tokens are JWTs (`ey…`). authenticateApiKey() parses the key.
  if (token.startsWith(API_KEY_PREFIX)) {
    // Throws AUTH_INVALID_API_KEY (401) or AUTH_INSUFFICIENT_SCOPE (403); notes the key's use.
    const auth = authenticateApiKey(`Bearer ${token}`, SCOPES.AGENTS_EXECUTE);
    const agentId = presented.agentIdHeader;
    if (agentId === undefined || !AGENT_ID.test(agentId)) {
      throw refuse('an API key must name its agent in the X-Agent-Id header', 'invalid_request');
    }
    return {
      tenantId: auth.tenant.id,
      agentId: asAgentId(agentId),
      via: 'api_key',
      identityProven: false,
    };
  }
  const index = deps.index();
  const claims = await verifiedClaims(index, token, issuer);
  if (!claims) throw refuse('the token is not a valid access token of this gateway');
  if (claims.aud !== resource) {
    throw refuse(`the token's audience is ${claims.aud.slice(0, 200)}, not this proxy resource`);
  }
  if (claims.client_id === GATEWAY_CLIENT_ID)
    throw refuse('a forwarding token cannot call the proxy');
  if (deps.revoked.has(claims.jti) || index.revoked.get(claims.tenant_id)?.has(claims.jti)) {
    throw refuse('the token was revoked');
  }
  const issuedTo = index.clients.get(claims.client_id);
  if (!issuedTo || issuedTo.tenant.id !== claims.tenant_id) {
    throw refuse('the token was issued to a client that no longer exists');
  }
  return {
    tenantId: issuedTo.tenant.id,
    agentId: asAgentId(claims.sub),
    via: 'access_token',
    identityProven:
      claims.agent_identity === 'private_key_jwt' || claims.agent_identity === 'agent_proof',
  };
}
