// NPL policy versions of the tenant: publish from YAML or JSON text (or a JSON document), list,
// read one, and pin/unpin for every inspect of the tenant. A published name@version never
// changes (same content again is a no-op, other content is refused). An invalid document is
// answered as NplDocumentError with every issue the engine found, with paths and positions.

import { SCOPES } from '../../../shared/identity/scopes.js';
import { NplError, parsePolicyUri } from '../../../shared/npl/index.js';
import { pinPolicy, publishPolicyVersion, unpinPolicy } from '../../services/npl-policies.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';
import { graphQLError, notFound } from '../errors.js';
import { auditOperatorAction, publishChange } from '../mutations.js';

builder.prismaObject('NplPolicyVersion', {
  fields: (t) => ({
    id: t.exposeID('id'),
    uri: t.string({
      description: 'svc://name@version',
      select: { name: true, version: true },
      resolve: (policy) => `svc://${policy.name}@${policy.version}`,
    }),
    name: t.exposeString('name'),
    version: t.exposeString('version'),
    description: t.exposeString('description', { nullable: true }),
    contentHash: t.exposeString('contentHash', {
      description: 'SHA-256 hex of the canonical JSON of the document.',
    }),
    document: t.expose('document', { type: 'JSON' }),
    source: t.exposeString('source', { description: 'The text it was published from.' }),
    publishedAt: t.expose('publishedAt', { type: 'DateTime' }),
    publishedBy: t.exposeString('publishedBy', { nullable: true }),
  }),
});

builder.queryField('nplPolicyVersions', (t) =>
  t.prismaField({
    type: ['NplPolicyVersion'],
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: { name: t.arg.string({ description: 'Only versions of this policy.' }) },
    resolve: (query, _root, args, context) =>
      context.db.prisma.nplPolicyVersion.findMany({
        ...query,
        where: { tenantId: context.caller.tenantId, ...(args.name ? { name: args.name } : {}) },
        orderBy: [{ name: 'asc' }, { publishedAt: 'asc' }],
      }),
  }),
);

builder.queryField('nplPolicyVersion', (t) =>
  t.prismaField({
    type: 'NplPolicyVersion',
    nullable: true,
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: { uri: t.arg.string({ required: true, description: 'svc://name@version' }) },
    resolve: (query, _root, args, context) => {
      const ref = parseUriArgument(args.uri);
      return context.db.prisma.nplPolicyVersion.findUnique({
        ...query,
        where: {
          tenantId_name_version: {
            tenantId: context.caller.tenantId,
            name: ref.name,
            version: ref.version,
          },
        },
      });
    },
  }),
);

function parseUriArgument(uri: string) {
  try {
    return parsePolicyUri(uri);
  } catch (error) {
    throw graphQLError('REQUEST_INVALID', (error as Error).message);
  }
}

const PublishNplPolicyInput = builder.inputType('PublishNplPolicyInput', {
  description: 'Exactly one of `source` (YAML or JSON text) and `document` (a JSON object).',
  fields: (t) => ({
    source: t.string(),
    document: t.field({ type: 'JSON' }),
  }),
});

const PublishNplPolicyPayload = builder
  .objectRef<{ tenantId: string; uri: string; created: boolean }>('PublishNplPolicyPayload')
  .implement({
    fields: (t) => ({
      uri: t.exposeString('uri'),
      created: t.exposeBoolean('created', {
        description: 'false when this exact content was already published under this version.',
      }),
      policyVersion: t.prismaField({
        type: 'NplPolicyVersion',
        resolve: (query, payload, _args, context) => {
          const ref = parsePolicyUri(payload.uri);
          return context.db.prisma.nplPolicyVersion.findUniqueOrThrow({
            ...query,
            where: {
              tenantId_name_version: {
                tenantId: payload.tenantId,
                name: ref.name,
                version: ref.version,
              },
            },
          });
        },
      }),
    }),
  });

builder.mutationField('publishNplPolicy', (t) =>
  t.field({
    type: PublishNplPolicyPayload,
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    errors: { types: [NplError] },
    args: { input: t.arg({ type: PublishNplPolicyInput, required: true }) },
    resolve: async (_root, { input }, context) => {
      const hasSource = typeof input.source === 'string';
      const hasDocument = input.document !== undefined && input.document !== null;
      if (hasSource === hasDocument) {
        throw graphQLError('REQUEST_INVALID', 'give exactly one of source and document');
      }
      if (hasDocument && (typeof input.document !== 'object' || Array.isArray(input.document))) {
        throw graphQLError('REQUEST_INVALID', 'document must be a JSON object');
      }
      const tenantId = context.caller.tenantId;
      const result = await publishPolicyVersion(context.db, {
        tenantId,
        source: hasSource ? (input.source as string) : (input.document as object),
        publishedBy: actorOf(context.caller),
      });
      if (result.created) {
        await auditOperatorAction(
          context,
          'npl_policy.published',
          { type: 'npl_policy', id: result.uri },
          { contentHash: result.contentHash },
        );
      }
      await publishChange(context);
      return { tenantId, uri: result.uri, created: result.created };
    },
  }),
);

for (const [field, pin] of [
  ['pinNplPolicy', true],
  ['unpinNplPolicy', false],
] as const) {
  builder.mutationField(field, (t) =>
    t.stringList({
      description: pin
        ? "Adds a published (or bundled) version to the tenant's pinned policies; returns the pins."
        : "Removes a version from the tenant's pinned policies; returns the pins.",
      authScopes: { scope: SCOPES.POLICIES_MANAGE },
      args: { uri: t.arg.string({ required: true }) },
      resolve: async (_root, { uri }, context) => {
        parseUriArgument(uri);
        const change = pin ? pinPolicy : unpinPolicy;
        let pins: string[];
        try {
          pins = await change(context.db, context.caller.tenantId, uri, actorOf(context.caller));
        } catch (error) {
          if ((error as { code?: string }).code === 'NOT_FOUND') {
            throw notFound(pin ? `published policy ${uri}` : `pin ${uri}`);
          }
          throw error;
        }
        await auditOperatorAction(context, pin ? 'npl_policy.pinned' : 'npl_policy.unpinned', {
          type: 'npl_policy',
          id: uri,
        });
        await publishChange(context);
        return pins;
      },
    }),
  );
}
