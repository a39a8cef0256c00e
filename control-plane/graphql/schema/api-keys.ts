// API keys of the caller's tenant: list (never the secret, only its public prefix), create (the
// secret is in the answer once) and revoke. A key can only hand out, and revoke, scopes it holds
// itself; the gateway's last live tenants:admin key cannot be revoked (docs/security.md).

import { z } from 'zod';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { createApiKeyAsOperator, revokeApiKeyAsOperator } from '../../services/api-keys.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';
import { scopeListRule } from '../input-rules.js';
import { publishChange } from '../mutations.js';

builder.prismaObject('ApiKey', {
  description:
    'An API key of the tenant, for `Authorization: Bearer …` on the REST and GraphQL APIs. ' +
    'Only its hash is stored; the secret is shown once, when the key is created.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable id (UUID); recorded as api_key:{id} in audits.' }),
    name: t.exposeString('name', { description: 'What the key is for, as its creator named it.' }),
    prefix: t.exposeString('prefix', {
      description: 'The public part of the key, for telling keys apart.',
    }),
    scopes: t.exposeStringList('scopes', {
      description: 'What the key may do, e.g. policies:manage (docs/security.md lists them).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    createdBy: t.exposeString('createdBy', {
      nullable: true,
      description:
        "Who created it: the creating key as api_key:{id} (preceded by that key's tenant for a " +
        "new tenant's first key), `bootstrap` for the first start's admin key, " +
        '`cli:admin-key reset` for a break-glass key, or null when created otherwise.',
    }),
    expiresAt: t.expose('expiresAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it stops working; null for a key that does not expire.',
    }),
    revokedAt: t.expose('revokedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it was revoked (it no longer works); null while not revoked.',
    }),
    lastUsedAt: t.expose('lastUsedAt', {
      type: 'DateTime',
      nullable: true,
      description:
        'When it last authenticated a request (recorded up to 30 s late); null if never.',
    }),
  }),
});

builder.queryField('apiKeys', (t) =>
  t.prismaField({
    type: ['ApiKey'],
    description: "API keys of the caller's tenant, oldest first; never their secrets.",
    authScopes: { scope: SCOPES.KEYS_MANAGE },
    args: {
      includeRevoked: t.arg.boolean({
        defaultValue: false,
        description: 'Also list revoked keys.',
      }),
    },
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
  description: "A new API key of the caller's tenant.",
  // One object schema, so a wrong name and wrong scopes are reported together.
  validate: z.looseObject({
    name: z
      .string()
      .max(200, 'must be 1-200 characters')
      .regex(/\S/, 'must be 1-200 characters, not only spaces'),
    scopes: scopeListRule,
    // A key that has already expired would be refused on first use: say so now.
    expiresAt: z
      .date()
      .nullish()
      .refine((at) => !at || at.getTime() > Date.now(), 'must be in the future'),
  }),
  fields: (t) => ({
    name: t.string({
      required: true,
      description: 'What the key is for, 1-200 characters.',
    }),
    scopes: t.stringList({
      required: true,
      description: 'Scopes of the new key: at least one, each held by the calling key.',
    }),
    expiresAt: t.field({
      type: 'DateTime',
      description: 'When the key stops working, in the future. Default: never.',
    }),
  }),
});

const CreateApiKeyPayload = builder
  .objectRef<{ id: string; secret: string }>('CreateApiKeyPayload')
  .implement({
    description: 'The created key and its secret.',
    fields: (t) => ({
      apiKey: t.prismaField({
        type: 'ApiKey',
        description: 'The created key.',
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
    description:
      "Creates an API key of the caller's tenant; the answer holds its secret, shown only once. " +
      'A key can only grant scopes it holds itself (AUTH_INSUFFICIENT_SCOPE otherwise).',
    authScopes: { scope: SCOPES.KEYS_MANAGE },
    args: { input: t.arg({ type: CreateApiKeyInput, required: true, description: 'The key.' }) },
    resolve: async (_root, { input }, context) => {
      const key = await createApiKeyAsOperator(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        actingScopes: context.caller.scopes,
        name: input.name,
        scopes: input.scopes,
        expiresAt: input.expiresAt ?? null,
      });
      await publishChange(context);
      return { id: key.id, secret: key.key };
    },
  }),
);

builder.mutationField('revokeApiKey', (t) =>
  t.prismaField({
    type: 'ApiKey',
    description:
      'Revokes an active key of the tenant: it stops working on the next request and its open ' +
      'subscriptions are closed (4401). NOT_FOUND when the tenant has no such active key; ' +
      'AUTH_INSUFFICIENT_SCOPE when the key holds a scope the caller lacks; API_KEY_LAST_ADMIN ' +
      "(409) when it is the gateway's last live key holding tenants:admin.",
    authScopes: { scope: SCOPES.KEYS_MANAGE },
    args: { id: t.arg.id({ required: true, description: 'The ApiKey.id.' }) },
    resolve: async (query, _root, args, context) => {
      const id = String(args.id);
      await revokeApiKeyAsOperator(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        actingScopes: context.caller.scopes,
        id,
      });
      await publishChange(context);
      return context.db.prisma.apiKey.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);
