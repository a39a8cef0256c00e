// Access tokens the gateway issued, on the management API: list the tenant's (by agent, client,
// active or not) and revoke one by its jti. Only the jti and claims are recorded; the token
// itself is never stored, so no field can expose it. A revocation is audited in the service and
// published here, so every data plane refuses the token (introspection answers active: false)
// once the mutation answers.
import { SCOPES } from '../../../shared/identity/scopes.js';
import { revokeIssuedToken } from '../../services/issued-tokens.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';
import { publishChange } from '../mutations.js';

builder.prismaObject('IssuedToken', {
  description:
    'An access token (RFC 9068 JWT) the gateway issued: its jti and claims. The token itself ' +
    'is not stored and never readable.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "The token's jti." }),
    agentId: t.exposeString('agentId', { description: 'The agent it was issued to (sub).' }),
    clientId: t.exposeString('clientId', {
      nullable: true,
      description:
        'The OAuth client that obtained it (client_id); null for a token the gateway minted ' +
        'itself to forward a call (oauthMode mcp_as).',
    }),
    audience: t.exposeString('audience', {
      description: 'Its one resource (aud): mcp://{serverId} or <public URL>/mcp/{serverId}.',
    }),
    scope: t.exposeString('scope', { description: 'Its scope claim; empty when none.' }),
    issuedAt: t.expose('issuedAt', { type: 'DateTime', description: 'When it was issued (iat).' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When it expires (exp).' }),
    revokedAt: t.expose('revokedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it was revoked; null while not revoked.',
    }),
    active: t.boolean({
      description: 'Neither revoked nor expired.',
      select: { revokedAt: true, expiresAt: true },
      resolve: (token) => token.revokedAt === null && token.expiresAt.getTime() > Date.now(),
    }),
  }),
});

builder.queryField('issuedTokens', (t) =>
  t.prismaConnection({
    type: 'IssuedToken',
    cursor: 'id',
    description:
      "Access tokens issued in the caller's tenant, newest first (by issuedAt). Recording is " +
      'batched, so a token just issued may appear a moment later. At most 100 per page.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      agentId: t.arg.id({ description: 'Only the tokens of this agent.' }),
      clientId: t.arg.id({ description: 'Only the tokens this OAuth client obtained.' }),
      active: t.arg.boolean({
        description:
          'true: only tokens neither revoked nor expired; false: only revoked or expired ones. ' +
          'Default: all.',
      }),
    },
    resolve: (query, _root, args, context) => {
      const now = new Date();
      const activity =
        args.active === true
          ? { revokedAt: null, expiresAt: { gt: now } }
          : args.active === false
            ? { OR: [{ revokedAt: { not: null } }, { expiresAt: { lte: now } }] }
            : {};
      return context.db.prisma.issuedToken.findMany({
        ...query,
        where: {
          tenantId: context.caller.tenantId,
          ...(args.agentId ? { agentId: String(args.agentId) } : {}),
          ...(args.clientId ? { clientId: String(args.clientId) } : {}),
          ...activity,
        },
        orderBy: [{ issuedAt: 'desc' }, { id: 'desc' }],
      });
    },
  }),
);

builder.mutationField('revokeIssuedToken', (t) =>
  t.prismaField({
    type: 'IssuedToken',
    description:
      'Revokes an access token of the tenant by its jti: every data plane refuses it and ' +
      'introspection answers active: false, from the snapshot published before this answers. ' +
      'Revoking a revoked token changes nothing. NOT_FOUND when the tenant has no such token. ' +
      'Audited as oauth.token_revoked.',
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      id: t.arg.id({ required: true, description: "The token's jti." }),
      reason: t.arg.string({ description: 'Why, recorded in the audit entry.' }),
    },
    resolve: async (query, _root, args, context) => {
      const { token, revoked } = await revokeIssuedToken(
        { db: context.db, audit: context.audit, events: context.events },
        {
          tenantId: context.caller.tenantId,
          id: String(args.id),
          reason: args.reason ?? null,
          actor: actorOf(context.caller),
        },
      );
      if (revoked) await publishChange(context);
      return context.db.prisma.issuedToken.findUniqueOrThrow({ ...query, where: { id: token.id } });
    },
  }),
);
