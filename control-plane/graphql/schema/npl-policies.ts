// NPL policy versions of the tenant: publish from YAML or JSON text (or a JSON document), list,
// read one, and pin/unpin for every inspect of the tenant (pin in place of another version: an
// upgrade in one change, control-plane/services/npl-policies.ts). A published name@version never
// changes (same content again is a no-op, other content is refused). An invalid document is
// answered as NplDocumentError with every issue the engine found, with paths and positions.

import { z } from 'zod';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { NplError, type NplIssue, parsePolicyUri } from '../../../shared/npl/index.js';
import {
  pinPolicy,
  previewPublication,
  publishPolicyVersionAsOperator,
  unpinPolicy,
} from '../../services/npl-policies.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';
import { jsonObjectRule, policyUriRule } from '../input-rules.js';
import { publishChange } from '../mutations.js';
import { NplIssueRef } from './errors.js';

builder.prismaObject('NplPolicyVersion', {
  description:
    'A published, immutable version of an NPL policy of the tenant: its rules decide what ' +
    'agents may do once it is pinned.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable id (UUID) of this version.' }),
    uri: t.string({
      description: 'Its address, svc://name@version: what pins and audit entries name.',
      select: { name: true, version: true },
      resolve: (policy) => `svc://${policy.name}@${policy.version}`,
    }),
    name: t.exposeString('name', { description: "The policy's name (policyName)." }),
    version: t.exposeString('version', { description: 'Its semantic version, e.g. 1.0.0.' }),
    description: t.exposeString('description', {
      nullable: true,
      description: "The document's own description, or null.",
    }),
    contentHash: t.exposeString('contentHash', {
      description: 'SHA-256 hex of the canonical JSON of the document.',
    }),
    document: t.expose('document', {
      type: 'JSON',
      description: 'The parsed document in canonical form (what the engine evaluates).',
    }),
    source: t.exposeString('source', { description: 'The text it was published from.' }),
    publishedAt: t.expose('publishedAt', {
      type: 'DateTime',
      description: 'When it was published.',
    }),
    publishedBy: t.exposeString('publishedBy', {
      nullable: true,
      description: 'Who published it, as api_key:{id}; null when unknown.',
    }),
  }),
});

builder.queryField('nplPolicyVersions', (t) =>
  t.prismaField({
    type: ['NplPolicyVersion'],
    description: "Published NPL policy versions of the caller's tenant, by name then age.",
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
    description: 'One published version of the tenant; null when there is none at this URI.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: {
      uri: t.arg.string({
        required: true,
        description: 'The version, as svc://name@version.',
        validate: policyUriRule,
      }),
    },
    resolve: (query, _root, args, context) => {
      const ref = parsePolicyUri(args.uri);
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

const PublishNplPolicyInput = builder.inputType('PublishNplPolicyInput', {
  description: 'Exactly one of `source` (YAML or JSON text) and `document` (a JSON object).',
  fields: (t) => ({
    source: t.string({ description: 'The policy as YAML or JSON text.' }),
    document: t.field({
      type: 'JSON',
      description: 'The policy as a JSON object.',
      validate: jsonObjectRule,
    }),
  }),
  // Loose: the validated input replaces the input, so both fields must pass through unchanged.
  validate: z
    .looseObject({ source: z.string().nullish(), document: z.unknown() })
    .refine((input) => (typeof input.source === 'string') !== (input.document != null), {
      message: 'give exactly one of source and document',
    }),
});

interface PublishNplPolicyOutcome {
  readonly tenantId: string;
  readonly uri: string;
  readonly created: boolean;
  readonly warnings: readonly NplIssue[];
}

const PublishNplPolicyPayload = builder
  .objectRef<PublishNplPolicyOutcome>('PublishNplPolicyPayload')
  .implement({
    description: 'The outcome of a publish.',
    fields: (t) => ({
      uri: t.exposeString('uri', { description: 'The version, as svc://name@version.' }),
      created: t.exposeBoolean('created', {
        description:
          'True for a new version; false when this exact content was already published ' +
          'under this version (nothing changed).',
      }),
      warnings: t.field({
        type: [NplIssueRef],
        description:
          'Findings that did not prevent publishing, with rule index and position, e.g. ' +
          'always_false: an ordering against a non-numeric string, which never matches, or ' +
          "same_as_previous: the document equals the policy's previous published version apart " +
          'from its version (docs/npl.md, "Warnings"). Empty when there are none.',
        resolve: (payload) => [...payload.warnings],
      }),
      policyVersion: t.prismaField({
        type: 'NplPolicyVersion',
        description: 'The published version.',
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
    description:
      'Publishes a version of an NPL policy in the tenant. An invalid document is answered as ' +
      'NplDocumentError with every issue; other content under a published name@version is ' +
      'REQUEST_INVALID (a version never changes). Pin it to enforce it.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    errors: {
      types: [NplError],
      union: { description: 'The published version, or the problems of the document.' },
      result: { description: 'The document is valid and its version is published.' },
      dataField: { description: 'What was published.' },
    },
    args: {
      input: t.arg({ type: PublishNplPolicyInput, required: true, description: 'The policy.' }),
    },
    resolve: async (_root, { input }, context) => {
      const hasSource = typeof input.source === 'string';
      const tenantId = context.caller.tenantId;
      const result = await publishPolicyVersionAsOperator(context, {
        tenantId,
        actor: actorOf(context.caller),
        source: hasSource ? (input.source as string) : (input.document as object),
      });
      await publishChange(context);
      return { tenantId, uri: result.uri, created: result.created, warnings: result.warnings };
    },
  }),
);

const NplPublishPreviewRef = builder
  .objectRef<Omit<PublishNplPolicyOutcome, 'tenantId'> & { readonly contentHash: string }>(
    'NplPublishPreview',
  )
  .implement({
    description: 'What publishNplPolicy would answer for a document; nothing was published.',
    fields: (t) => ({
      uri: t.exposeString('uri', { description: 'The version, as svc://name@version.' }),
      contentHash: t.exposeString('contentHash', {
        description: 'SHA-256 hex of the canonical JSON of the document.',
      }),
      created: t.exposeBoolean('created', {
        description:
          'True when publishing would make a new version; false when this exact content is ' +
          'published under this version already.',
      }),
      warnings: t.field({
        type: [NplIssueRef],
        description:
          "The warnings publishing would return: the engine's (always_false) and the " +
          "tenant's (same_as_previous: the document equals the policy's previous published " +
          'version apart from its version; docs/npl.md, "Warnings").',
        resolve: (preview) => [...preview.warnings],
      }),
    }),
  });

builder.queryField('nplPublishPreview', (t) =>
  t.field({
    type: NplPublishPreviewRef,
    description:
      'A dry run of publishNplPolicy in the tenant: its warnings before publishing (the ' +
      'console shows them under the draft). The same refusals: NplDocumentError for an invalid ' +
      'document, REQUEST_INVALID for other content under a published version.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    errors: {
      types: [NplError],
      union: { description: 'The preview, or the problems of the document.' },
      result: { description: 'The document is valid.' },
      dataField: { description: 'What publishing would answer.' },
    },
    args: {
      input: t.arg({ type: PublishNplPolicyInput, required: true, description: 'The policy.' }),
    },
    resolve: (_root, { input }, context) =>
      previewPublication(context.db, {
        tenantId: context.caller.tenantId,
        source: typeof input.source === 'string' ? input.source : (input.document as object),
      }),
  }),
);

builder.mutationField('pinNplPolicy', (t) =>
  t.stringList({
    description:
      'Pins a published (or bundled) version: every pinned version is evaluated on every ' +
      'inspect and the most restrictive decision wins. With `replaces` (an upgrade) it takes ' +
      'the place of that pinned version of the same policy in one change: one audit entry, one ' +
      'snapshot. Without it, it is pinned beside the others. Returns the pins.',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: {
      uri: t.arg.string({
        required: true,
        description: 'The version to pin, as svc://name@version.',
        validate: policyUriRule,
      }),
      replaces: t.arg.string({
        description:
          'A pinned version of the same policy to unpin in the same change, as ' +
          'svc://name@version. NPL_PIN_REPLACES_NOT_PINNED when it is not pinned, ' +
          'NPL_PIN_ALREADY_PINNED when `uri` is pinned already, REQUEST_INVALID when it is a ' +
          'version of another policy (docs/npl.md, "Pinning").',
        validate: policyUriRule,
      }),
    },
    resolve: async (_root, { uri, replaces }, context) => {
      const pins = await pinPolicy(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        uri,
        replaces: replaces ?? undefined,
      });
      await publishChange(context);
      return pins;
    },
  }),
);

builder.mutationField('unpinNplPolicy', (t) =>
  t.stringList({
    description: "Removes a version from the tenant's pinned policies; returns the pins.",
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    args: {
      uri: t.arg.string({
        required: true,
        description: 'The version, as svc://name@version.',
        validate: policyUriRule,
      }),
    },
    resolve: async (_root, { uri }, context) => {
      const pins = await unpinPolicy(context, {
        tenantId: context.caller.tenantId,
        actor: actorOf(context.caller),
        uri,
      });
      await publishChange(context);
      return pins;
    },
  }),
);
