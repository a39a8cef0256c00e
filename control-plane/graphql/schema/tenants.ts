// Tenants: the caller's own (`me`), and for gateway administrators (tenants:admin) the list of
// every tenant and the creation of new ones with their first API key.

import { ALL_SCOPES, isScope, SCOPES } from '../../../shared/identity/scopes.js';
import { createApiKey, createTenant } from '../../services/tenants.js';
import { builder } from '../builder.js';
import type { Caller } from '../context.js';
import { graphQLError } from '../errors.js';
import { auditOperatorAction, publishChange } from '../mutations.js';

export const TenantRef = builder.prismaObject('Tenant', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    displayName: t.exposeString('displayName', { nullable: true }),
    configVersion: t.exposeInt('configVersion', {
      description: 'Bumped on every configuration change; data planes apply snapshots by it.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const ViewerRef = builder.objectRef<Caller>('Viewer').implement({
  description: 'The caller: the API key of this request and its tenant.',
  fields: (t) => ({
    apiKeyId: t.exposeID('keyId'),
    scopes: t.stringList({ resolve: (caller) => [...caller.scopes].sort() }),
    tenant: t.prismaField({
      type: 'Tenant',
      resolve: (query, caller, _args, context) =>
        context.db.prisma.tenant.findUniqueOrThrow({ ...query, where: { id: caller.tenantId } }),
    }),
  }),
});

builder.queryField('me', (t) =>
  t.field({
    type: ViewerRef,
    description: 'Who is calling: any valid API key may ask.',
    resolve: (_root, _args, context) => context.caller,
  }),
);

builder.queryField('tenants', (t) =>
  t.prismaField({
    type: ['Tenant'],
    authScopes: { scope: SCOPES.TENANTS_ADMIN },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.tenant.findMany({ ...query, orderBy: { name: 'asc' } }),
  }),
);

const CreateTenantInput = builder.inputType('CreateTenantInput', {
  fields: (t) => ({
    name: t.string({ required: true, description: '1-63 lower-case letters, digits or dashes.' }),
    displayName: t.string(),
    initialKeyScopes: t.stringList({
      description:
        'Scopes of the API key created with the tenant (default: every scope but tenants:admin).',
    }),
  }),
});

const CreateTenantPayload = builder
  .objectRef<{ tenantId: string; apiKeyId: string; secret: string }>('CreateTenantPayload')
  .implement({
    fields: (t) => ({
      tenant: t.prismaField({
        type: 'Tenant',
        resolve: (query, payload, _args, context) =>
          context.db.prisma.tenant.findUniqueOrThrow({ ...query, where: { id: payload.tenantId } }),
      }),
      apiKeyId: t.exposeID('apiKeyId'),
      secret: t.exposeString('secret', {
        description: "The new tenant's first API key: shown once, never stored in clear.",
      }),
    }),
  });

builder.mutationField('createTenant', (t) =>
  t.field({
    type: CreateTenantPayload,
    authScopes: { scope: SCOPES.TENANTS_ADMIN },
    args: { input: t.arg({ type: CreateTenantInput, required: true }) },
    resolve: async (_root, { input }, context) => {
      const scopes =
        input.initialKeyScopes ?? ALL_SCOPES.filter((scope) => scope !== SCOPES.TENANTS_ADMIN);
      const unknown = scopes.filter((scope) => !isScope(scope));
      if (unknown.length > 0 || scopes.length === 0) {
        throw graphQLError('REQUEST_INVALID', `unknown or missing scopes: ${unknown.join(', ')}`);
      }
      const tenant = await createTenant(context.db, {
        name: input.name,
        ...(input.displayName ? { displayName: input.displayName } : {}),
      });
      const key = await createApiKey(context.db, {
        tenantId: tenant.id,
        name: 'initial',
        scopes,
        createdBy: `tenant ${context.caller.tenantName} api_key:${context.caller.keyId}`,
      });
      await auditOperatorAction(
        context,
        'tenant.created',
        { type: 'tenant', id: tenant.id },
        { name: tenant.name, byTenant: context.caller.tenantId, initialKeyId: key.id },
        tenant.id,
      );
      await publishChange(context);
      return { tenantId: tenant.id, apiKeyId: key.id, secret: key.key };
    },
  }),
);
