// How long a held call's approval has before it lapses (approvalTtlSeconds), ticking with the
// screen's clock; it turns yellow in the last five minutes and red in the last one, so the urgent
// calls stand out. Whether a client still waits is another clock (client-waiting.tsx).
import { Badge } from '@mantine/core';

export function formatTimeLeft(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const pad = (value: number) => String(value).padStart(2, '0');
  if (hours > 0) return `${hours}h ${pad(minutes)}m`;
  return `${minutes}:${pad(seconds)}`;
}

export function TimeLeft({ expiresAt, now }: { expiresAt: string; now: number }) {
  const left = Date.parse(expiresAt) - now;
  const color = left < 60_000 ? 'red' : left < 300_000 ? 'yellow' : 'gray';
  return (
    <Badge color={color} variant="light" size="lg" title={`Expires at ${expiresAt}`}>
      expires in {formatTimeLeft(left)}
    </Badge>
  );
}
