// The editable fields of the gateway policy (GatewayPolicyInput) and how a form value becomes the
// input of updateGatewayPolicy: only the changed fields are sent (omitted ones keep their value,
// so a concurrent pin is not undone). pinnedPolicies is edited on the NPL tab, not here.
import type { ResultOf, VariablesOf } from '../../graphql.ts';
import type { GatewayPolicyQuery, UpdateGatewayPolicyMutation } from './operations.ts';

export type GatewayPolicyValue = ResultOf<typeof GatewayPolicyQuery>['gatewayPolicy'];
export type GatewayPolicyInput = VariablesOf<typeof UpdateGatewayPolicyMutation>['input'];

export const EDITABLE_FIELDS = [
  'trustedServers',
  'blockedMethods',
  'blockedTools',
  'denyDestructive',
  'destructiveToolPatterns',
  'exfilDetectSecrets',
  'exfilCheckDestinations',
  'exfilAllowedDomains',
  'exfilBulkExportLimit',
  'allowedModes',
  'proxyExecutionMode',
  'proxyModeHeader',
  'approvalTtlSeconds',
  'approvalWaitSeconds',
  'maxDelegationDepth',
  'oauthMode',
  'toolPinning',
  'requireAgentIdentity',
] as const satisfies readonly (keyof GatewayPolicyInput & keyof GatewayPolicyValue)[];

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
