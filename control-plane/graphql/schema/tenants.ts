// Tenants: the caller's own (`me`), and for gateway administrators (tenants:admin) the list of
// every tenant and the creation of new ones with their first API key.

import { SCOPES } from '../../../shared/identity/scopes.js';
import { createTenantAsOperator } from '../../services/tenants.js';
import { builder } from '../builder.js';
import { actorOf, type Caller } from '../context.js';
import { scopeListRule } from '../input-rules.js';
import { publishChange } from '../mutations.js';

export const TenantRef = builder.prismaObject('Tenant', {
  description:
    'An isolated customer of the gateway: its own keys, agents, policies and audit trail.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable id (UUID).' }),
    name: t.exposeString('name', {
      description: 'Unique name: 1-63 lower-case letters, digits or dashes.',
    }),
    displayName: t.exposeString('displayName', {
      nullable: true,
      description: 'Name for people, or null.',
    }),
    configVersion: t.exposeInt('configVersion', {
      description: 'Bumped on every configuration change; data planes apply snapshots by it.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      description: 'When its record (name, configVersion) last changed.',
    }),
  }),
});

const ViewerRef = builder.objectRef<Caller>('Viewer').implement({
  description: 'The caller: the API key of this request and its tenant.',
  fields: (t) => ({
    apiKeyId: t.exposeID('keyId', { description: 'The ApiKey.id of the key of this request.' }),
    scopes: t.stringList({
      description: 'Scopes of that key, sorted.',
      resolve: (caller) => [...caller.scopes].sort(),
    }),
    tenant: t.prismaField({
      type: 'Tenant',
      description: 'The tenant the key belongs to: every operation acts inside it.',
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
    description: 'Every tenant of the gateway, by name (gateway administrators).',
    authScopes: { scope: SCOPES.TENANTS_ADMIN },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.tenant.findMany({ ...query, orderBy: { name: 'asc' } }),
  }),
);

const CreateTenantInput = builder.inputType('CreateTenantInput', {
  description: 'A new tenant; it starts closed (no trusted server) until configured.',
  fields: (t) => ({
    name: t.string({
      required: true,
      description: 'Unique name: 1-63 lower-case letters, digits or dashes.',
    }),
    displayName: t.string({ description: 'Name for people.' }),
    initialKeyScopes: t.stringList({
      description:
        'Scopes of the API key created with the tenant (default: every scope but tenants:admin).',
      validate: scopeListRule,
    }),
  }),
});

const CreateTenantPayload = builder
  .objectRef<{ tenantId: string; apiKeyId: string; secret: string }>('CreateTenantPayload')
  .implement({
    description: 'The created tenant and its first API key.',
    fields: (t) => ({
      tenant: t.prismaField({
        type: 'Tenant',
        description: 'The created tenant.',
        resolve: (query, payload, _args, context) =>
          context.db.prisma.tenant.findUniqueOrThrow({ ...query, where: { id: payload.tenantId } }),
      }),
      apiKeyId: t.exposeID('apiKeyId', { description: 'The ApiKey.id of its first key.' }),
      secret: t.exposeString('secret', {
        description: "The new tenant's first API key: shown once, never stored in clear.",
      }),
    }),
  });

builder.mutationField('createTenant', (t) =>
  t.field({
    type: CreateTenantPayload,
    description:
      'Creates a tenant with its first API key (gateway administrators); the secret is shown ' +
      'once. Audited in the new tenant.',
    authScopes: { scope: SCOPES.TENANTS_ADMIN },
    args: {
      input: t.arg({ type: CreateTenantInput, required: true, description: 'The tenant.' }),
    },
    resolve: async (_root, { input }, context) => {
      const { tenant, apiKey } = await createTenantAsOperator(context, {
        name: input.name,
        ...(input.displayName ? { displayName: input.displayName } : {}),
        initialKeyScopes: input.initialKeyScopes,
        actor: actorOf(context.caller),
        byTenant: { id: context.caller.tenantId, name: context.caller.tenantName },
      });
      await publishChange(context);
      return { tenantId: tenant.id, apiKeyId: apiKey.id, secret: apiKey.key };
    },
  }),
);
