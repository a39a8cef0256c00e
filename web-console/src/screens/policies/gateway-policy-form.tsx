// The gateway policy tab: every check inspect applies before NPL, as a form. Save sends the
// changed fields to updateGatewayPolicy; the API's field issues (GatewayPolicyValidationError, or
// a REQUEST_INVALID error's extensions.issues) appear under the field they name, and so do the
// warnings of a stored change (a trusted server id no registered server has) until it is edited.
// Trusted servers suggests the registered server ids, as the spawn drawer does for audiences.
// Usage limits are a list of small forms (usage-limits-editor.tsx) whose issues are keyed by the
// limit's field (`limits[1].maxCalls`, formFieldOf).
import {
  Alert,
  Button,
  Fieldset,
  Group,
  Loader,
  MultiSelect,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  TagsInput,
  Text,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconDeviceFloppy } from '@tabler/icons-react';
import { useEffect, useRef, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { apiProblem, ErrorAlert } from '../../components/error-alert.tsx';
import { McpServerIdsQuery } from '../agents/operations.ts';
import {
  CHOICES,
  changedFields,
  type EditableField,
  formFieldOf,
  formOf,
  type GatewayPolicyForm,
} from './gateway-policy-fields.ts';
import { GatewayPolicyQuery, UpdateGatewayPolicyMutation } from './operations.ts';
import { UsageLimitsEditor } from './usage-limits-editor.tsx';

type FieldErrors = Partial<Record<string, string>>;

/** Issues (or warnings) by the form field they concern; null `field` concerns the whole form. */
function collectIssues(
  issues: readonly { field: string | null; message: string }[],
  whole = '',
): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) {
    const field = issue.field === null ? whole : formFieldOf(issue.field);
    const text =
      issue.field === null || issue.field === field
        ? issue.message
        : `${issue.field}: ${issue.message}`;
    errors[field] = errors[field] ? `${errors[field]}; ${text}` : text;
  }
  return errors;
}

/** An integer input; empty is null (meaningful for the bulk-export limit only). */
function toInt(value: string | number): number | null {
  if (value === '' || value === null) return null;
  const number = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(number) ? number : null;
}

/** Two forms hold the same values (formOf builds its keys in one order). */
function sameForm(a: GatewayPolicyForm, b: GatewayPolicyForm): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function GatewayPolicyTab() {
  const [result, reexecute] = useQuery({ query: GatewayPolicyQuery });
  const [saving, save] = useMutation(UpdateGatewayPolicyMutation);
  const [stored, setStored] = useState<GatewayPolicyForm | null>(null);
  /** The stored policy as the effect below compares it (state lags one render behind). */
  const storedRef = useRef<GatewayPolicyForm | null>(null);
  const [form, setForm] = useState<GatewayPolicyForm | null>(null);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [warnings, setWarnings] = useState<FieldErrors>({});
  const [refusal, setRefusal] = useState<string | null>(null);
  const [servers] = useQuery({ query: McpServerIdsQuery });
  const serverIds = (servers.data?.mcpServers ?? []).map((server) => server.serverId);

  const policy = result.data?.gatewayPolicy;
  useEffect(() => {
    if (!policy) return;
    const value = formOf(policy);
    // The client answers from its cache, then from the network ('cache-and-network'): the second
    // answer of an unchanged policy must not wipe what the operator has typed since the first.
    if (storedRef.current && sameForm(storedRef.current, value)) return;
    storedRef.current = value;
    setStored(value);
    setForm(value);
  }, [policy]);

  if (result.error) return <ErrorAlert error={result.error} />;
  if (!form || !stored || !policy) return <Loader size="sm" aria-label="Loading gateway policy" />;

  const set = <F extends EditableField>(field: F, value: GatewayPolicyForm[F]) => {
    setForm((current) => (current ? { ...current, [field]: value } : current));
    setErrors((current) => ({ ...current, [field]: undefined }));
    setWarnings((current) => ({ ...current, [field]: undefined }));
  };
  const setLimits = (limits: GatewayPolicyForm['limits'], stale: readonly string[] | null) => {
    setForm((current) => (current ? { ...current, limits } : current));
    const isStale = (key: string) =>
      stale === null ? key === 'limits' || key.startsWith('limits[') : stale.includes(key);
    const keep = (current: FieldErrors) =>
      Object.fromEntries(Object.entries(current).filter(([key]) => !isStale(key)));
    setErrors(keep);
    setWarnings(keep);
  };
  const input = changedFields(stored, form);
  const dirty = Object.keys(input).length > 0;

  const submit = async () => {
    const answer = await save({ input });
    if (answer.error) {
      const problem = apiProblem(answer.error);
      setErrors(collectIssues(problem.issues));
      setRefusal(null);
      return;
    }
    const data = answer.data?.updateGatewayPolicy;
    if (data?.__typename === 'GatewayPolicyValidationError') {
      setErrors(collectIssues(data.issues));
      setRefusal(data.message);
      return;
    }
    if (data?.__typename === 'MutationUpdateGatewayPolicySuccess') {
      setErrors({});
      setWarnings(collectIssues(data.warnings));
      setRefusal(null);
      const value = formOf(data.data);
      storedRef.current = value;
      setStored(value);
      setForm(value);
      const count = data.warnings.length;
      notifications.show({
        color: count > 0 ? 'yellow' : 'green',
        title:
          count > 0 ? `Saved with ${count === 1 ? 'a warning' : `${count} warnings`}` : 'Saved',
        message:
          count > 0
            ? 'The gateway policy is published; the warnings are under their fields.'
            : 'The gateway policy is published.',
      });
      reexecute({ requestPolicy: 'network-only' });
    }
  };

  // Fields whose warnings appear under them; the others (and form-wide ones) above Save. Filled
  // as the JSX below is built, which calls list() before it reaches the Save row.
  const warnedInPlace = new Set<string>();
  const list = (
    field: EditableField & keyof typeof form,
    label: string,
    description: string,
    suggestions: readonly string[] = [],
  ) => {
    warnedInPlace.add(field);
    return (
      <Stack gap={4}>
        <TagsInput
          label={label}
          description={description}
          data={[...suggestions]}
          value={form[field] as string[]}
          onChange={(value) => set(field, value as never)}
          error={errors[field]}
          clearable
        />
        {warnings[field] ? (
          <Alert color="yellow" variant="light" role="status" title="Saved, with a warning">
            {warnings[field]}
          </Alert>
        ) : null}
      </Stack>
    );
  };
  const otherWarnings = () =>
    Object.entries(warnings).filter(([field, text]) => text && !warnedInPlace.has(field));
  const toggle = (field: EditableField, label: string, description: string) => (
    <Switch
      label={label}
      description={description}
      checked={form[field] as boolean}
      onChange={(event) => set(field, event.currentTarget.checked as never)}
      error={errors[field]}
    />
  );
  const integer = (field: EditableField, label: string, description: string) => (
    <NumberInput
      label={label}
      description={description}
      value={(form[field] as number | null) ?? ''}
      onChange={(value) => set(field, toInt(value) as never)}
      error={errors[field]}
      allowDecimal={false}
    />
  );
  const choice = (
    field: EditableField & keyof typeof CHOICES,
    label: string,
    description: string,
  ) => (
    <Select
      label={label}
      description={description}
      data={[...CHOICES[field]]}
      value={form[field] as string}
      onChange={(value) => value && set(field, value as never)}
      error={errors[field]}
      allowDeselect={false}
    />
  );

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          Checked on every inspect before the NPL policies. Last changed{' '}
          {new Date(policy.updatedAt).toLocaleString()}
          {policy.updatedBy ? ` by ${policy.updatedBy}` : ''}.
        </Text>
        <Fieldset legend="Servers, methods and tools">
          <Stack gap="sm">
            {list(
              'trustedServers',
              'Trusted servers',
              'Ids of registered MCP servers agents may reach; any other is denied.',
              serverIds,
            )}
            {list(
              'blockedMethods',
              'Blocked methods',
              'JSON-RPC methods refused for every agent (* globs).',
            )}
            {list('blockedTools', 'Blocked tools', 'Tool names refused for every agent (* globs).')}
          </Stack>
        </Fieldset>
        <Fieldset legend="Destructive calls and exfiltration">
          <Stack gap="sm">
            {toggle(
              'denyDestructive',
              'Deny destructive tools',
              'Destructive tool names, destructiveHint, destructive SQL or shell.',
            )}
            {list(
              'destructiveToolPatterns',
              'Destructive tool patterns',
              'Tool-name words treated as destructive; the whole list.',
            )}
            {toggle(
              'exfilDetectSecrets',
              'Deny arguments carrying secrets',
              'Private keys, cloud keys, tokens.',
            )}
            {toggle(
              'exfilCheckDestinations',
              'Check destinations',
              'URLs and e-mail addresses in arguments must be in the allowed domains.',
            )}
            {list(
              'exfilAllowedDomains',
              'Allowed domains',
              'Each allows itself and its subdomains.',
            )}
            {integer(
              'exfilBulkExportLimit',
              'Bulk export limit',
              'A call asking for more items is denied; empty switches the check off.',
            )}
          </Stack>
        </Fieldset>
        <Fieldset legend="Modes and approvals">
          <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
            <MultiSelect
              label="Allowed modes"
              description="Execution modes agents may request."
              data={[...CHOICES.allowedModes]}
              value={form.allowedModes}
              onChange={(value) => set('allowedModes', value)}
              error={errors.allowedModes}
            />
            {choice(
              'proxyExecutionMode',
              'Proxy execution mode',
              'Mode of MCP proxy calls of agents without their own.',
            )}
            {toggle(
              'proxyModeHeader',
              'Mode header',
              'An MCP proxy client may choose the mode with X-Execution-Mode.',
            )}
            {choice(
              'toolPinning',
              'Tool pinning',
              'Tool definitions callable: first seen, or approved only.',
            )}
            {integer(
              'approvalTtlSeconds',
              'Approval time to live (seconds)',
              'How long a held call waits for a decision, 10-604800.',
            )}
            {integer(
              'approvalWaitSeconds',
              'Approval wait (seconds)',
              'How long the MCP proxy keeps a held call open, 0-3600.',
            )}
          </SimpleGrid>
        </Fieldset>
        <Fieldset legend="Identity">
          <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
            {choice('oauthMode', 'OAuth mode', 'How agents authenticate to MCP servers.')}
            {integer(
              'maxDelegationDepth',
              'Maximum delegation depth',
              'Longest delegation chain accepted, 0-16.',
            )}
            {toggle(
              'requireAgentIdentity',
              'Require agent identity',
              'Every inspect must present an Agent-Proof credential.',
            )}
          </SimpleGrid>
        </Fieldset>
        <UsageLimitsEditor
          limits={form.limits}
          errors={errors}
          serverIds={serverIds}
          onChange={setLimits}
        />
        {otherWarnings().map(([field, text]) => (
          <Alert
            key={field}
            color="yellow"
            variant="light"
            role="status"
            title="Saved, with a warning"
          >
            {field ? `${field}: ${text}` : text}
          </Alert>
        ))}
        {refusal ? (
          <Alert color="red" title="The gateway refused this change" role="alert">
            {refusal}
          </Alert>
        ) : null}
        {saving.error && Object.keys(errors).length === 0 ? (
          <ErrorAlert error={saving.error} />
        ) : null}
        <Group>
          <Button
            type="submit"
            leftSection={<IconDeviceFloppy size={16} />}
            disabled={!dirty}
            loading={saving.fetching}
          >
            Save
          </Button>
          <Button
            variant="default"
            disabled={!dirty}
            onClick={() => {
              setForm(stored);
              setErrors({});
              setWarnings({});
              setRefusal(null);
            }}
          >
            Discard changes
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
