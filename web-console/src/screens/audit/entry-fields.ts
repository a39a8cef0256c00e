// The few metadata keys the table shows as columns, read defensively: metadata is whatever the
// writer of the entry put there (docs/audit.md), so a key may be absent or of another type.
import type { AuditEntry } from './queries.ts';

/** The hash the first entry of a chain links to. */
export const GENESIS_HASH = '0'.repeat(64);

function metadataString(entry: AuditEntry, key: string): string | null {
  const metadata = entry.metadata;
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return null;
  const value = (metadata as Record<string, unknown>)[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

export function decisionOf(entry: AuditEntry): string | null {
  return metadataString(entry, 'decision');
}

export function reasonCodeOf(entry: AuditEntry): string | null {
  return metadataString(entry, 'reasonCode');
}

/** Who acted: the operator's key (`actor`), else the kind of actor (agent, system). */
export function actorOf(entry: AuditEntry): string | null {
  return metadataString(entry, 'actor') ?? metadataString(entry, 'actorType');
}

export function decisionColor(decision: string): string {
  if (decision === 'deny') return 'red';
  if (decision === 'allow') return 'green';
  return 'yellow';
}

/** A short, readable local time with seconds; the full instant is in the detail. */
export function formatTime(instant: string): string {
  return new Date(instant).toLocaleString(undefined, {
    dateStyle: 'short',
    timeStyle: 'medium',
  });
}
