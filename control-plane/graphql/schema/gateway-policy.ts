// The tenant's gateway policy: read it, and change any subset of its fields. An invalid change is
// answered as a GatewayPolicyValidationError listing every wrong field; nothing is stored then.
// The policy's fields and the input's are derived from the fields' zod rules (shared/gateway-policy/
// gateway-policy-fields.ts): the GraphQL type from the rule's type, nullable where null is a value,
// the description from `.describe()`; the change is validated with the same rules.

import { z } from 'zod';
import {
  GATEWAY_POLICY_FIELD_NAMES,
  GATEWAY_POLICY_FIELDS,
  type GatewayPolicyField,
  type GatewayPolicyPatch,
  gatewayPolicyPatchIssues,
} from '../../../shared/gateway-policy/gateway-policy-fields.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { updateGatewayPolicyAsOperator } from '../../services/gateway-policy.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';
import { publishChange } from '../mutations.js';
import { GatewayPolicyValidationError } from './errors.js';
import { type MutationWarning, MutationWarningRef } from './mutation-warning.js';
import { limitFromInput, UsageLimitInputRef, UsageLimitRef } from './usage-limits.js';

/** The warnings of a stored change, keyed by the policy row the mutation answers. */
const warningsOfUpdate = new WeakMap<object, readonly MutationWarning[]>();

/** Fields whose items are objects: their GraphQL types are written by hand (usage-limits.ts). */
const OBJECT_LISTS = {
  limits: { output: [UsageLimitRef], input: [UsageLimitInputRef] },
} as const;

interface GraphQLShape {
  readonly type: 'Boolean' | 'Int' | 'String' | ['String'] | readonly [object];
  readonly inputType?: readonly [object];
  /** Whether null is a value of the field (the bulk-export limit: null is "off"). */
  readonly nullable: boolean;
  readonly description: string;
}

/** The GraphQL type of a field's rule: a boolean, an integer, a string or enum, or a list of those. */
function graphqlShapeOf(field: GatewayPolicyField): GraphQLShape {
  const rule = GATEWAY_POLICY_FIELDS[field];
  const inner: z.ZodType = rule.unwrap();
  const nullable = inner instanceof z.ZodNullable;
  const value: unknown = inner instanceof z.ZodNullable ? inner.unwrap() : inner;
  if (rule.description === undefined)
    throw new Error(`gateway policy field ${field} has no description`);
  if (
    field in OBJECT_LISTS &&
    value instanceof z.ZodArray &&
    value.element instanceof z.ZodObject
  ) {
    const { output, input } = OBJECT_LISTS[field as keyof typeof OBJECT_LISTS];
    return { type: output, inputType: input, nullable, description: rule.description };
  }
  const type = scalarOf(value) ?? (value instanceof z.ZodArray ? listOf(value.element) : undefined);
  if (type === undefined) throw new Error(`gateway policy field ${field} has no GraphQL type`);
  return { type, nullable, description: rule.description };
}

function scalarOf(rule: unknown): 'Boolean' | 'Int' | 'String' | undefined {
  if (rule instanceof z.ZodBoolean) return 'Boolean';
  if (rule instanceof z.ZodNumber && rule.isInt) return 'Int';
  if (rule instanceof z.ZodString || rule instanceof z.ZodEnum) return 'String';
  return undefined;
}

function listOf(element: unknown): ['String'] | undefined {
  return scalarOf(element) === 'String' ? ['String'] : undefined;
}

const SHAPES = Object.fromEntries(
  GATEWAY_POLICY_FIELD_NAMES.map((field) => [field, graphqlShapeOf(field)]),
) as Record<GatewayPolicyField, GraphQLShape>;

builder.prismaObject('GatewayPolicy', {
  description:
    "The tenant's gateway policy: the checks every inspect applies before the NPL policies.",
  fields: (t) => ({
    ...Object.fromEntries(
      GATEWAY_POLICY_FIELD_NAMES.map((field) => {
        const { type, nullable, description } = SHAPES[field];
        // The column of the field's name holds the rule's values (tests/shared/gateway-policy/).
        return [field, t.expose(field as never, { type, nullable, description } as never)];
      }),
    ),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
    updatedBy: t.exposeString('updatedBy', {
      nullable: true,
      description: 'Who changed it last, as api_key:{id}; null when unknown.',
    }),
  }),
});

builder.queryField('gatewayPolicy', (t) =>
  t.prismaField({
    type: 'GatewayPolicy',
    description: "The caller's tenant's gateway policy.",
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.gatewayPolicy.findUniqueOrThrow({
        ...query,
        where: { tenantId: context.caller.tenantId },
      }),
  }),
);

const GatewayPolicyInput = builder.inputType('GatewayPolicyInput', {
  description: 'Fields to change; omitted fields keep their value. Lists replace the whole list.',
  fields: (t) =>
    Object.fromEntries(
      GATEWAY_POLICY_FIELD_NAMES.map((field) => {
        const { type, inputType, description } = SHAPES[field];
        return [
          field,
          t.field({ type: (inputType ?? type) as never, required: false, description }),
        ];
      }),
    ),
});

builder.mutationField('updateGatewayPolicy', (t) =>
  t.prismaField({
    type: 'GatewayPolicy',
    authScopes: { scope: SCOPES.POLICIES_MANAGE },
    description:
      'Changes any subset of the gateway policy. An invalid change is answered as ' +
      'GatewayPolicyValidationError listing every wrong field, and nothing is stored. A valid ' +
      'change is stored and published, with warnings about what was most likely not meant.',
    errors: {
      types: [GatewayPolicyValidationError],
      union: { description: 'The updated policy, or why the change was refused.' },
      result: {
        description: 'The change was stored and published.',
        fields: (t) => ({
          warnings: t.field({
            type: [MutationWarningRef],
            description:
              'What was noticed about the change, e.g. TRUSTED_SERVER_NOT_REGISTERED for a ' +
              'trusted server id no registered MCP server has. Empty when there is nothing.',
            resolve: (policy) => [...(warningsOfUpdate.get(policy) ?? [])],
          }),
        }),
      },
      dataField: { description: 'The policy after the change.' },
    },
    args: {
      input: t.arg({ type: GatewayPolicyInput, required: true, description: 'What to change.' }),
    },
    resolve: async (query, _root, { input }, context) => {
      // An explicit null means "unchanged", except for a field null is a value of (null = off).
      const patch = Object.fromEntries(
        Object.entries(input).filter(
          ([field, value]) =>
            value !== undefined && (value !== null || SHAPES[field as GatewayPolicyField].nullable),
        ),
      ) as GatewayPolicyPatch;
      if (Array.isArray(patch.limits)) {
        (patch as Record<string, unknown>).limits = patch.limits.map((limit) =>
          limitFromInput(limit as unknown as Record<string, unknown>),
        );
      }
      const issues = gatewayPolicyPatchIssues(patch);
      if (issues.length > 0) throw new GatewayPolicyValidationError(issues);
      const tenantId = context.caller.tenantId;
      const warnings = await updateGatewayPolicyAsOperator(context, {
        tenantId,
        actor: actorOf(context.caller),
        patch,
      });
      await publishChange(context);
      const policy = await context.db.prisma.gatewayPolicy.findUniqueOrThrow({
        ...selectingSomeColumn(query),
        where: { tenantId },
      });
      warningsOfUpdate.set(policy, warnings);
      return policy;
    },
  }),
);

/**
 * The query with at least one column. When the result union is answered without any column of
 * the policy (only `__typename`, or a success member whose `data` is not selected), Pothos plans
 * `{ select: {} }`, and Prisma refuses an empty `select`: the primary key then stands in.
 */
function selectingSomeColumn<Query extends { select?: object }>(
  query: Query,
): Query | { select: { tenantId: true } } {
  return query.select && Object.keys(query.select).length === 0
    ? { select: { tenantId: true } }
    : query;
}
