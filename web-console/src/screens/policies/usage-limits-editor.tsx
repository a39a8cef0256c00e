// The gateway policy's usage limits (docs/limits.md) as a list of small forms: add, edit, remove.
// The list is saved whole with the rest of the policy (gateway-policy-form.tsx); the API checks it
// against the limits' one definition (shared/limits/usage-limits.ts) and each issue is shown at the
// field of the limit it names (`limits[1].maxCalls`). Bounds in the descriptions come from there.
import {
  Button,
  Fieldset,
  Group,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import {
  MAX_LIMIT_CALLS,
  MAX_LIMITS_PER_TENANT,
  MAX_WINDOW_SECONDS,
} from '../../../../shared/limits/usage-limits.ts';
import { windowText } from '../../components/usage-meter.tsx';
import { CHOICES, type LimitForm, limitFieldKey, newLimit } from './gateway-policy-fields.ts';

type Errors = Partial<Record<string, string>>;

const PER_LABELS: Record<LimitForm['per'], string> = {
  AGENT: 'Agent',
  AGENT_TOOL: 'Agent and tool',
  TENANT: 'Tenant (all agents together)',
};

const ACTION_LABELS: Record<LimitForm['action'], string> = {
  DENY: 'Deny (429)',
  REQUIRE_HUMAN: 'Hold for a human',
};

const WINDOW_PRESETS = [
  { label: 'Minute', seconds: 60 },
  { label: 'Hour', seconds: 3600 },
  { label: 'Day', seconds: 86_400 },
] as const;

/** The budget's fields are checked together (a budget needs both; a limit needs one of them). */
const COUNTED_TOGETHER: readonly (keyof LimitForm)[] = ['maxCalls', 'sumArgument', 'maxSum'];

function toNumber(value: string | number): number | null {
  if (value === '' || value === null) return null;
  const number = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(number) ? number : null;
}

function LimitEditor({
  index,
  limit,
  errors,
  serverIds,
  onChange,
  onRemove,
}: {
  index: number;
  limit: LimitForm;
  errors: Errors;
  serverIds: readonly string[];
  onChange: (limit: LimitForm, touched: readonly (keyof LimitForm)[]) => void;
  onRemove: () => void;
}) {
  const set = <M extends keyof LimitForm>(member: M, value: LimitForm[M]) =>
    onChange(
      { ...limit, [member]: value },
      COUNTED_TOGETHER.includes(member) ? COUNTED_TOGETHER : [member],
    );
  const error = (member: keyof LimitForm) => errors[limitFieldKey(index, member)];
  const name = `Limit ${index + 1}`;
  return (
    <Fieldset legend={limit.limitId ? `${name}: ${limit.limitId}` : name} variant="filled">
      <Stack gap="sm">
        {errors[limitFieldKey(index)] ? (
          <Text size="sm" c="red" role="alert">
            {errors[limitFieldKey(index)]}
          </Text>
        ) : null}
        <SimpleGrid cols={{ base: 1, md: 3 }} spacing="sm">
          <TextInput
            label="Limit id"
            description="a-z, 0-9 and _; names it in answers, audit, metrics and NPL."
            placeholder="daily_payments"
            value={limit.limitId}
            onChange={(event) => set('limitId', event.currentTarget.value)}
            error={error('limitId')}
          />
          <Select
            label="Counted per"
            description="Whose calls are counted together."
            data={CHOICES.limitPer.map((value) => ({ value, label: PER_LABELS[value] }))}
            value={limit.per}
            onChange={(value) => value && set('per', value as LimitForm['per'])}
            error={error('per')}
            allowDeselect={false}
          />
          <Select
            label="Action"
            description="What a call that would exceed it meets."
            data={CHOICES.limitAction.map((value) => ({ value, label: ACTION_LABELS[value] }))}
            value={limit.action}
            onChange={(value) => value && set('action', value as LimitForm['action'])}
            error={error('action')}
            allowDeselect={false}
          />
          <TagsInput
            label="Tools"
            description="Tool names or * globs; empty: every tool."
            value={limit.tools}
            onChange={(value) => set('tools', value)}
            error={error('tools')}
            clearable
          />
          <TagsInput
            label="Servers"
            description="Server ids; empty: every server."
            data={[...serverIds]}
            value={limit.servers}
            onChange={(value) => set('servers', value)}
            error={error('servers')}
            clearable
          />
          <NumberInput
            label="Window (seconds)"
            description={`${
              limit.windowSeconds ? `${windowText(limit.windowSeconds)}; ` : ''
            }1-${MAX_WINDOW_SECONDS}, aligned to UTC.`}
            value={limit.windowSeconds ?? ''}
            onChange={(value) => set('windowSeconds', toNumber(value))}
            error={error('windowSeconds')}
            allowDecimal={false}
            inputContainer={(input) => (
              <Group gap={4} wrap="nowrap" align="center">
                <div style={{ flex: 1 }}>{input}</div>
                {WINDOW_PRESETS.map((preset) => (
                  <Button
                    key={preset.label}
                    size="compact-sm"
                    variant={limit.windowSeconds === preset.seconds ? 'filled' : 'default'}
                    aria-label={`Window of one ${preset.label.toLowerCase()}`}
                    onClick={() => set('windowSeconds', preset.seconds)}
                  >
                    {preset.label}
                  </Button>
                ))}
              </Group>
            )}
          />
          <NumberInput
            label="Max calls"
            description={`Calls per window, 1-${MAX_LIMIT_CALLS}; empty: calls are not limited.`}
            value={limit.maxCalls ?? ''}
            onChange={(value) => set('maxCalls', toNumber(value))}
            error={error('maxCalls')}
            allowDecimal={false}
          />
          <TextInput
            label="Budget argument"
            description="The argument summed, e.g. amount or payment.total; empty: no budget."
            value={limit.sumArgument ?? ''}
            onChange={(event) => set('sumArgument', event.currentTarget.value.trim() || null)}
            error={error('sumArgument')}
          />
          <NumberInput
            label="Budget maximum"
            description="The most the sum may reach in a window (above 0)."
            value={limit.maxSum ?? ''}
            onChange={(value) => set('maxSum', toNumber(value))}
            error={error('maxSum')}
          />
        </SimpleGrid>
        <Group justify="flex-end">
          <Button
            variant="subtle"
            color="red"
            size="compact-sm"
            leftSection={<IconTrash size={14} />}
            aria-label={`Remove limit ${index + 1}`}
            onClick={onRemove}
          >
            Remove
          </Button>
        </Group>
      </Stack>
    </Fieldset>
  );
}

/**
 * `onChange` gets the whole new list and the issue keys it makes stale: a limit's edited fields,
 * or every limit's (null) when a limit was added or removed, since issues name limits by index.
 */
export function UsageLimitsEditor({
  limits,
  errors,
  serverIds,
  onChange,
}: {
  limits: readonly LimitForm[];
  errors: Errors;
  serverIds: readonly string[];
  onChange: (limits: LimitForm[], staleErrors: readonly string[] | null) => void;
}) {
  return (
    <Fieldset legend="Usage limits">
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          Call counts and budgets (sums of one argument) over fixed windows, checked after the NPL
          policies for the calls they allow. A call past a limit is denied or held for a human; the
          agent's page shows what each has counted. At most {MAX_LIMITS_PER_TENANT}; saved as one
          list.
        </Text>
        {errors.limits ? (
          <Text size="sm" c="red" role="alert">
            {errors.limits}
          </Text>
        ) : null}
        {limits.length === 0 ? <Text size="sm">No limits: calls are not counted.</Text> : null}
        {limits.map((limit, index) => (
          <LimitEditor
            // Limits have no id of their own until saved; the editors hold no state of their own.
            // biome-ignore lint/suspicious/noArrayIndexKey: the position is the limit's identity here
            key={index}
            index={index}
            limit={limit}
            errors={errors}
            serverIds={serverIds}
            onChange={(next, touched) =>
              onChange(
                limits.map((current, at) => (at === index ? next : current)),
                [limitFieldKey(index), ...touched.map((member) => limitFieldKey(index, member))],
              )
            }
            onRemove={() =>
              onChange(
                limits.filter((_, at) => at !== index),
                null,
              )
            }
          />
        ))}
        <Group>
          <Button
            variant="light"
            leftSection={<IconPlus size={16} />}
            disabled={limits.length >= MAX_LIMITS_PER_TENANT}
            onClick={() => onChange([...limits, newLimit()], null)}
          >
            Add limit
          </Button>
        </Group>
      </Stack>
    </Fieldset>
  );
}
