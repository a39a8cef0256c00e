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

/** The tool of an inspect or approval entry. */
export function toolOf(entry: AuditEntry): string | null {
  return metadataString(entry, 'tool');
}

/** What a decision's badge says: short enough to fit its column (the value is its title). */
const DECISION_LABELS: Readonly<Record<string, string>> = {
  allow: 'allow',
  deny: 'deny',
  require_human_approval: 'held',
  approved: 'approved',
  rejected: 'rejected',
};

export function decisionLabel(decision: string): string {
  return DECISION_LABELS[decision] ?? decision;
}

/** The kind of actor the entry records (agent, operator, system, oauth_client). */
export function actorTypeOf(entry: AuditEntry): string | null {
  return metadataString(entry, 'actorType');
}

export function decisionColor(decision: string): string {
  if (decision === 'deny' || decision === 'rejected') return 'red';
  if (decision === 'allow' || decision === 'approved') return 'green';
  return 'yellow';
}

/** The local date alone, short. */
export function formatDate(instant: string): string {
  return new Date(instant).toLocaleDateString(undefined, { dateStyle: 'short' });
}

/** The local time of day with seconds. */
export function formatClock(instant: string): string {
  return new Date(instant).toLocaleTimeString(undefined, { timeStyle: 'medium' });
}
