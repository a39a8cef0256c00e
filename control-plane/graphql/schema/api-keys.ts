// API keys of the caller's tenant: list (never the secret, only its public prefix), create (the
// secret is in the answer once) and revoke. A key can only hand out scopes it holds itself.

import { SCOPES } from '../../../shared/identity/scopes.js';
import { createApiKey, revokeApiKey } from '../../services/tenants.js';
import { builder } from '../builder.js';
import { graphQLError, notFound } from '../errors.js';
import { auditOperatorAction, publishChange } from '../mutations.js';

builder.prismaObject('ApiKey', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', {
      description: 'The public part of the key, for telling keys apart.',
    }),
    scopes: t.exposeStringList('scopes'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    createdBy: t.exposeString('createdBy', { nullable: true }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryField('apiKeys', (t) =>
  t.prismaField({
    type: ['ApiKey'],
    authScopes: { scope: SCOPES.KEYS_MANAGE },
    args: { includeRevoked: t.arg.boolean({ defaultValue: false }) },
    resolve: (query, _root, args, context) =>
      context.db.prisma.apiKey.findMany({
        ...query,
        where: {
          tenantId: context.caller.tenantId,
          ...(args.includeRevoked ? {} : { revokedAt: null }),
        },
        orderBy: { createdAt: 'asc' },
      }),
  }),
);

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    scopes: t.stringList({ required: true }),
    expiresAt: t.field({ type: 'DateTime' }),
  }),
});

const CreateApiKeyPayload = builder
  .objectRef<{ id: string; secret: string }>('CreateApiKeyPayload')
  .implement({
    fields: (t) => ({
      apiKey: t.prismaField({
        type: 'ApiKey',
        resolve: (query, payload, _args, context) =>
          context.db.prisma.apiKey.findUniqueOrThrow({ ...query, where: { id: payload.id } }),
      }),
      secret: t.exposeString('secret', {
        description: 'The whole key for `Authorization: Bearer …`: shown once, never stored.',
      }),
    }),
  });

builder.mutationField('createApiKey', (t) =>
  t.field({
    type: CreateApiKeyPayload,
    authScopes: { scope: SCOPES.KEYS_MANAGE },
    args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
    resolve: async (_root, { input }, context) => {
      const beyond = input.scopes.filter((scope) => !context.caller.scopes.has(scope));
      if (beyond.length > 0) {
        throw graphQLError(
          'AUTH_INSUFFICIENT_SCOPE',
          `a key cannot grant scopes it does not hold: ${beyond.join(', ')}`,
        );
      }
      if (input.name.trim() === '' || input.name.length > 200) {
        throw graphQLError('REQUEST_INVALID', 'name must be 1-200 characters');
      }
      const key = await createApiKey(context.db, {
        tenantId: context.caller.tenantId,
        name: input.name,
        scopes: input.scopes,
        expiresAt: input.expiresAt ?? null,
        createdBy: `api_key:${context.caller.keyId}`,
      });
      await auditOperatorAction(
        context,
        'api_key.created',
        { type: 'api_key', id: key.id },
        { prefix: key.prefix, scopes: [...input.scopes] },
      );
      await publishChange(context);
      return { id: key.id, secret: key.key };
    },
  }),
);

builder.mutationField('revokeApiKey', (t) =>
  t.prismaField({
    type: 'ApiKey',
    authScopes: { scope: SCOPES.KEYS_MANAGE },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, context) => {
      const id = String(args.id);
      if (!(await revokeApiKey(context.db, context.caller.tenantId, id))) {
        throw notFound('active API key');
      }
      await auditOperatorAction(context, 'api_key.revoked', { type: 'api_key', id });
      await publishChange(context);
      return context.db.prisma.apiKey.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);
