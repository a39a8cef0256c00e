// The editable fields of the gateway policy (GatewayPolicyInput) and how a form value becomes the
// input of updateGatewayPolicy: only the changed fields are sent (omitted ones keep their value,
// so a concurrent pin is not undone). pinnedPolicies is edited on the NPL tab, not here. The
// fields and their choices come from the policy's one definition (shared/gateway-policy/).
import {
  GATEWAY_POLICY_FIELD_NAMES,
  GATEWAY_POLICY_FIELDS,
  type GatewayPolicyField,
} from '../../../../shared/gateway-policy/gateway-policy-fields.ts';
import type { ResultOf, VariablesOf } from '../../graphql.ts';
import type { GatewayPolicyQuery, UpdateGatewayPolicyMutation } from './operations.ts';

/** The values a field of choices may take, in the order the definition lists them. */
export const CHOICES = {
  allowedModes: GATEWAY_POLICY_FIELDS.allowedModes.unwrap().element.options,
  proxyExecutionMode: GATEWAY_POLICY_FIELDS.proxyExecutionMode.unwrap().options,
  toolPinning: GATEWAY_POLICY_FIELDS.toolPinning.unwrap().options,
  oauthMode: GATEWAY_POLICY_FIELDS.oauthMode.unwrap().options,
} as const;

export type GatewayPolicyValue = ResultOf<typeof GatewayPolicyQuery>['gatewayPolicy'];
export type GatewayPolicyInput = VariablesOf<typeof UpdateGatewayPolicyMutation>['input'];

/** Fields edited elsewhere: pinnedPolicies on the NPL tab, limits (an object list) on their own. */
type EditedElsewhere = 'pinnedPolicies' | 'limits';

/**
 * Every field of the policy but those edited elsewhere. A field of the definition that the
 * GatewayPolicyFields fragment (operations.ts) does not ask for is a compile error here.
 */
export const EDITABLE_FIELDS: readonly (Exclude<GatewayPolicyField, EditedElsewhere> &
  keyof GatewayPolicyInput &
  keyof GatewayPolicyValue)[] = GATEWAY_POLICY_FIELD_NAMES.filter(
  (field): field is Exclude<GatewayPolicyField, EditedElsewhere> =>
    field !== 'pinnedPolicies' && field !== 'limits',
);

export type EditableField = (typeof EDITABLE_FIELDS)[number];
export type GatewayPolicyForm = { -readonly [F in EditableField]: GatewayPolicyValue[F] };

export function formOf(policy: GatewayPolicyValue): GatewayPolicyForm {
  return Object.fromEntries(
    EDITABLE_FIELDS.map((field) => [field, policy[field]]),
  ) as GatewayPolicyForm;
}

/** The fields whose value differs from the stored policy. */
export function changedFields(
  stored: GatewayPolicyForm,
  form: GatewayPolicyForm,
): GatewayPolicyInput {
  const input: Record<string, unknown> = {};
  for (const field of EDITABLE_FIELDS) {
    if (JSON.stringify(stored[field]) !== JSON.stringify(form[field])) input[field] = form[field];
  }
  return input as GatewayPolicyInput;
}

/** An API issue's field (`allowedModes[1]`) as the form field it belongs to. */
export function formFieldOf(issueField: string): string {
  return issueField.replace(/^input\./, '').split(/[.[]/)[0] ?? issueField;
}
