// The editable fields of the gateway policy (GatewayPolicyInput) and how a form value becomes the
// input of updateGatewayPolicy: only the changed fields are sent (omitted ones keep their value,
// so a concurrent pin is not undone). pinnedPolicies is edited on the NPL tab, not here. The
// fields and their choices come from the policy's one definition (shared/gateway-policy/).
// Most fields are scalars or lists of names; `limits` is a list of objects: its items are kept in
// one canonical shape (the input's fields, in one order), so comparing with the stored list finds
// real changes only, the list is sent whole, and an API issue of one item's field
// (`limits[1].maxCalls`) is kept apart from the other items' and shown at that item's field.
import {
  GATEWAY_POLICY_FIELD_NAMES,
  GATEWAY_POLICY_FIELDS,
  type GatewayPolicyField,
} from '../../../../shared/gateway-policy/gateway-policy-fields.ts';
import { LIMIT_ACTIONS, LIMIT_SUBJECTS } from '../../../../shared/limits/usage-limits.ts';
import type { ResultOf, VariablesOf } from '../../graphql.ts';
import type { GatewayPolicyQuery, UpdateGatewayPolicyMutation } from './operations.ts';

/** The values a field of choices may take, in the order the definition lists them. */
export const CHOICES = {
  allowedModes: GATEWAY_POLICY_FIELDS.allowedModes.unwrap().element.options,
  proxyExecutionMode: GATEWAY_POLICY_FIELDS.proxyExecutionMode.unwrap().options,
  toolPinning: GATEWAY_POLICY_FIELDS.toolPinning.unwrap().options,
  oauthMode: GATEWAY_POLICY_FIELDS.oauthMode.unwrap().options,
  limitPer: LIMIT_SUBJECTS,
  limitAction: LIMIT_ACTIONS,
} as const;

export type GatewayPolicyValue = ResultOf<typeof GatewayPolicyQuery>['gatewayPolicy'];
export type GatewayPolicyInput = VariablesOf<typeof UpdateGatewayPolicyMutation>['input'];

/**
 * Every field of the policy but pinnedPolicies, edited on the NPL tab. A field of the definition
 * that the GatewayPolicyFields fragment (operations.ts) does not ask for is a compile error here.
 */
export const EDITABLE_FIELDS: readonly (Exclude<GatewayPolicyField, 'pinnedPolicies'> &
  keyof GatewayPolicyInput &
  keyof GatewayPolicyValue)[] = GATEWAY_POLICY_FIELD_NAMES.filter(
  (field): field is Exclude<GatewayPolicyField, 'pinnedPolicies'> => field !== 'pinnedPolicies',
);

export type EditableField = (typeof EDITABLE_FIELDS)[number];

/** A usage limit as the form edits it and the input sends it: every field, always this order. */
export interface LimitForm {
  limitId: string;
  per: GatewayPolicyValue['limits'][number]['per'];
  tools: string[];
  servers: string[];
  windowSeconds: number | null;
  maxCalls: number | null;
  sumArgument: string | null;
  maxSum: number | null;
  action: GatewayPolicyValue['limits'][number]['action'];
}

export type GatewayPolicyForm = {
  -readonly [F in Exclude<EditableField, 'limits'>]: GatewayPolicyValue[F];
} & { limits: LimitForm[] };

function limitFormOf(limit: GatewayPolicyValue['limits'][number]): LimitForm {
  return {
    limitId: limit.limitId,
    per: limit.per,
    tools: [...limit.tools],
    servers: [...limit.servers],
    windowSeconds: limit.windowSeconds,
    maxCalls: limit.maxCalls,
    sumArgument: limit.sumArgument,
    maxSum: limit.maxSum,
    action: limit.action,
  };
}

/** The limit "Add limit" starts from: an hour's call count for each agent, refused past it. */
export function newLimit(): LimitForm {
  return {
    limitId: '',
    per: 'AGENT',
    tools: [],
    servers: [],
    windowSeconds: 3600,
    maxCalls: null,
    sumArgument: null,
    maxSum: null,
    action: 'DENY',
  };
}

export function formOf(policy: GatewayPolicyValue): GatewayPolicyForm {
  const form = Object.fromEntries(EDITABLE_FIELDS.map((field) => [field, policy[field]]));
  return { ...form, limits: policy.limits.map(limitFormOf) } as GatewayPolicyForm;
}

/** The fields whose value differs from the stored policy; a changed list is sent whole. */
export function changedFields(
  stored: GatewayPolicyForm,
  form: GatewayPolicyForm,
): GatewayPolicyInput {
  const input: Record<string, unknown> = {};
  for (const field of EDITABLE_FIELDS) {
    // Both sides are in the canonical shape (formOf, LimitForm): equal JSON is an equal value.
    if (JSON.stringify(stored[field]) !== JSON.stringify(form[field])) input[field] = form[field];
  }
  return input as GatewayPolicyInput;
}

/** The fields whose items are objects with fields of their own, each shown at its own input. */
const OBJECT_LIST_FIELDS: ReadonlySet<string> = new Set<EditableField>(['limits']);

/**
 * Where the form shows an API issue's field: the form field (`allowedModes[1]` is shown at
 * allowedModes), or for a list of objects the item's field (`limits[1].tools[0]` at
 * `limits[1].tools`) or the item (`limits[1]`). Paths may come as `input.limits[1].maxCalls`
 * (validation), `$input.limits[1].maxCalls` (GraphQL's variable coercion) or `input.limits.1.x`.
 */
export function formFieldOf(issueField: string): string {
  const path = issueField.replace(/^\$?input\./, '').replace(/\.(\d+)(?=\.|\[|$)/g, '[$1]');
  const [field = issueField, index, member] = path.split(/[.[\]]+/).filter(Boolean);
  if (!OBJECT_LIST_FIELDS.has(field) || index === undefined || !/^\d+$/.test(index)) return field;
  return member === undefined ? `${field}[${index}]` : `${field}[${index}].${member}`;
}

/** The key of a limit's field in the form's issues: `limits[1].maxCalls`, or `limits[1]`. */
export function limitFieldKey(index: number, member?: keyof LimitForm): string {
  return member === undefined ? `limits[${index}]` : `limits[${index}].${member}`;
}
