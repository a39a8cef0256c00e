// POST /oauth/introspect (RFC 7662) and POST /oauth/revoke (RFC 7009), client-authenticated as
// the token endpoint is. A client sees and revokes only its own tokens (RFC 7009 §2.1): those
// issued to it, and the gateway's forwarding tokens minted for its own agent (they carry the
// client_id `gateway`, not a client's). Introspection verifies the JWT itself (no row is read: a
// token issued a moment ago is known before the recorder writes it) and answers `active: false`
// for anything not good now: bad signature or issuer, expired, revoked (snapshot or this
// process), its client revoked, its agent killed or gone, another tenant, another client.
// Revocation answers 200 once the client authenticated for a token it cannot verify or of another
// tenant (left alone: nothing to tell a stranger), and refuses another client's token of its
// tenant with unauthorized_client, leaving it active.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { gatewayError } from '../../../shared/errors/index.js';
import { GATEWAY_CLIENT_ID } from '../../oauth/forwarding-tokens.js';
import type { IndexedClient, OAuthIndex } from '../../oauth/oauth-index.js';
import { requiredParam } from '../../oauth/request-params.js';
import {
  type RevokedTokens,
  revokeAccessToken,
  type TokenRevocationDependencies,
} from '../../oauth/revocations.js';
import { type VerifiedAccessToken, verifyAccessToken } from '../../oauth/verify-access-token.js';
import type { CompiledTenant } from '../../store/compiled-types.js';
import type { OAuthContext } from './context.js';

export type RevocationDependencies = TokenRevocationDependencies;

const INACTIVE = { active: false } as const;

export async function introspectToken(
  ctx: OAuthContext,
  revoked: RevokedTokens,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { index, params, client } = await ctx.authenticate(request);
  const token = requiredParam(params, 'token');
  const claims = await verifyAccessToken(index, token, ctx.issuer());
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  if (!claims || !isOwnToken(client, claims) || !isActive(index, revoked, client.tenant, claims)) {
    return reply.send(INACTIVE);
  }
  return reply.send({
    active: true,
    scope: claims.scope,
    client_id: claims.client_id,
    token_type: 'Bearer',
    exp: claims.exp,
    iat: claims.iat,
    sub: claims.sub,
    aud: claims.aud,
    iss: claims.iss,
    jti: claims.jti,
    tenant_id: claims.tenant_id,
    // RFC 8693 §4.1: the delegation chain of a delegate's token, nearest delegator outermost.
    ...(claims.act === undefined ? {} : { act: claims.act }),
  });
}

/** Whether the token was issued to this client, or minted by the gateway for its agent. */
function isOwnToken({ client }: IndexedClient, claims: VerifiedAccessToken): boolean {
  if (claims.client_id === GATEWAY_CLIENT_ID) return claims.sub === client.agentId;
  return claims.client_id === client.id;
}

function isActive(
  index: OAuthIndex,
  revoked: RevokedTokens,
  tenant: CompiledTenant,
  claims: VerifiedAccessToken,
): boolean {
  if (claims.tenant_id !== tenant.id) return false;
  if (revoked.has(claims.jti) || index.revoked.get(tenant.id)?.has(claims.jti)) return false;
  if (claims.client_id !== GATEWAY_CLIENT_ID) {
    const issuedTo = index.clients.get(claims.client_id);
    if (!issuedTo || issuedTo.tenant.id !== tenant.id) return false;
  }
  const agent = tenant.agents.get(claims.sub);
  return agent !== undefined && !agent.killed;
}

export async function revokeToken(
  ctx: OAuthContext,
  deps: RevocationDependencies,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { index, params, client } = await ctx.authenticate(request);
  const token = requiredParam(params, 'token');
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  const claims = await verifyAccessToken(index, token, ctx.issuer());
  if (!claims || claims.tenant_id !== client.tenant.id) return reply.send({});
  if (!isOwnToken(client, claims)) throw gatewayError('OAUTH_TOKEN_OF_ANOTHER_CLIENT');
  await revokeAccessToken(
    deps,
    {
      jti: claims.jti,
      tenantId: claims.tenant_id,
      clientId: claims.client_id === GATEWAY_CLIENT_ID ? null : claims.client_id,
      agentId: claims.sub,
      audience: claims.aud,
      scope: claims.scope,
      issuedAt: claims.iat,
      expiresAt: claims.exp,
    },
    { actorType: 'oauth_client', actor: client.client.id },
  );
  return reply.send({});
}
