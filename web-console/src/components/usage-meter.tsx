// How the console shows a usage limit's count against its maximum (docs/limits.md): a bar that
// turns yellow from 80 % and red at the maximum, with `used / max` beside it, and the words for a
// limit's subject and window. Used by the agent's usage (Agents) and a call a limit held
// (Approvals).
import { Group, Progress, Text } from '@mantine/core';

/** Whose calls a limit counts together, as the console says it. */
export const LIMIT_SUBJECT_TEXT = {
  AGENT: 'per agent',
  AGENT_TOOL: 'per agent and tool',
  TENANT: 'whole tenant',
} as const;

/** A count or sum as an operator reads it: grouped digits, decimals only where there are any. */
export function formatAmount(value: number): string {
  return value.toLocaleString(undefined, { maximumFractionDigits: 6 });
}

/** A window as an operator says it: "1 day", "90 minutes", "45 seconds". */
export function windowText(seconds: number): string {
  for (const [unit, size] of [
    ['day', 86_400],
    ['hour', 3600],
    ['minute', 60],
  ] as const) {
    if (seconds >= size && seconds % size === 0) {
      const count = seconds / size;
      return `${count} ${unit}${count === 1 ? '' : 's'}`;
    }
  }
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}

/** A time ahead as a countdown reads: "2d 3h", "3h 12m", "12 min", "40 s". */
export function untilText(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const [days, hours, minutes] = [
    Math.floor(seconds / 86_400),
    Math.floor((seconds % 86_400) / 3600),
    Math.floor((seconds % 3600) / 60),
  ];
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes} min`;
  return `${seconds} s`;
}

/** `used` against `max`; `label` names the bar for assistive technology ("daily_payments sum"). */
export function UsageMeter({ used, max, label }: { used: number; max: number; label: string }) {
  const share = max > 0 ? Math.min(100, (used / max) * 100) : 100;
  const color = share >= 100 ? 'red' : share >= 80 ? 'yellow' : 'teal';
  return (
    <Group gap="xs" wrap="nowrap">
      <Progress
        value={share}
        color={color}
        w={120}
        aria-label={`${label}: ${formatAmount(used)} of ${formatAmount(max)}`}
      />
      <Text size="sm" span style={{ whiteSpace: 'nowrap' }}>
        {formatAmount(used)} / {formatAmount(max)}
      </Text>
    </Group>
  );
}
