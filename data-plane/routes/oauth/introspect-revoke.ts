// POST /oauth/introspect (RFC 7662) and POST /oauth/revoke (RFC 7009), client-authenticated as
// the token endpoint is. A client sees and revokes only tokens of its own tenant. Introspection
// verifies the JWT itself (no row is read: a token issued a moment ago is known before the
// recorder writes it) and answers `active: false` for anything not good now: bad signature or
// issuer, expired, revoked (snapshot or this process), its client revoked, its agent killed or
// gone, another tenant. Revocation always answers 200 once the client authenticated; a token it
// cannot verify or that is another tenant's is left alone.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_ACTIONS } from '../../../shared/audit/actions.js';
import type { AuditWriter } from '../../../storage/audit-writer.js';
import type { Database } from '../../../storage/database.js';
import { GATEWAY_CLIENT_ID } from '../../oauth/forwarding-tokens.js';
import type { OAuthIndex } from '../../oauth/oauth-index.js';
import { requiredParam } from '../../oauth/request-params.js';
import { type RevokedTokens, writeTokenRevocation } from '../../oauth/revocations.js';
import { type VerifiedAccessToken, verifyAccessToken } from '../../oauth/verify-access-token.js';
import type { CompiledTenant } from '../../store/compiled-types.js';
import type { OAuthContext } from './context.js';

export interface RevocationDependencies {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly revoked: RevokedTokens;
}

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
  if (!claims || !isActive(index, revoked, client.tenant, claims)) return reply.send(INACTIVE);
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
  const clientId = claims.client_id === GATEWAY_CLIENT_ID ? null : claims.client_id;
  const written = await writeTokenRevocation(deps.db, {
    jti: claims.jti,
    tenantId: claims.tenant_id,
    clientId,
    agentId: claims.sub,
    audience: claims.aud,
    scope: claims.scope,
    issuedAt: claims.iat,
    expiresAt: claims.exp,
  });
  deps.revoked.add(claims.jti, claims.exp * 1000);
  if (written) {
    await deps.audit.append({
      tenantId: claims.tenant_id,
      action: AUDIT_ACTIONS.OAUTH_TOKEN_REVOKED,
      resourceType: 'access_token',
      resourceId: claims.jti,
      metadata: {
        actorType: 'oauth_client',
        actor: client.client.id,
        clientId,
        agentId: claims.sub,
        audience: claims.aud,
        expiresAt: new Date(claims.exp * 1000).toISOString(),
      },
    });
  }
  return reply.send({});
}
