// How the anchoring panel words a checkpoint's age and a sink's state. Pure, so the words an
// operator reads are decided in one place.
import type { AuditSinkState } from './queries.ts';

/** "1 entry", "12 entries". */
export function countEntries(n: number): string {
  return `${n} ${n === 1 ? 'entry' : 'entries'}`;
}

/** "12 s ago", "4 min ago", "3 h ago", "2 d ago": the age of a signature or a delivery. */
export function formatAge(since: string, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(since)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} d ago`;
}

export type SinkCondition = 'failing' | 'catching-up' | 'anchored' | 'idle';

/**
 * A sink whose last delivery failed is failing until one succeeds (it retries with backoff); one
 * with the tenant's checkpoints still to receive is catching up (a new checkpoint waits a second
 * to settle); otherwise it holds the tenant's latest, or has nothing of this tenant yet.
 */
export function sinkCondition(sink: AuditSinkState): SinkCondition {
  if (sink.lastError !== null) return 'failing';
  if (sink.backlog > 0) return 'catching-up';
  return sink.anchoredTreeSize === null ? 'idle' : 'anchored';
}

export const SINK_CONDITIONS: Record<SinkCondition, { label: string; color: string }> = {
  failing: { label: 'Failing, retrying', color: 'red' },
  'catching-up': { label: 'Catching up', color: 'yellow' },
  anchored: { label: 'Anchored', color: 'green' },
  idle: { label: 'Nothing yet', color: 'gray' },
};

export const SINK_KINDS: Record<string, string> = {
  file: 'File',
  http: 'HTTP endpoint',
  witness: 'Witness',
};

/** The sink's name without its kind prefix (`file:/path` → `/path`). */
export function sinkTarget(sink: Pick<AuditSinkState, 'name' | 'kind'>): string {
  return sink.name.startsWith(`${sink.kind}:`) ? sink.name.slice(sink.kind.length + 1) : sink.name;
}

/** One line for a folded panel (a phone): how many sinks hold the latest, and how many fail. */
export function sinksSummary(sinks: readonly AuditSinkState[]): { text: string; color: string } {
  if (sinks.length === 0) return { text: 'no sink configured', color: 'yellow' };
  const of = `of ${sinks.length} ${sinks.length === 1 ? 'sink' : 'sinks'}`;
  const failing = sinks.filter((sink) => sinkCondition(sink) === 'failing').length;
  if (failing > 0) return { text: `${failing} ${of} failing`, color: 'red' };
  const anchored = sinks.filter((sink) => sinkCondition(sink) === 'anchored').length;
  return {
    text: `${anchored} ${of} anchored`,
    color: anchored === sinks.length ? 'green' : 'yellow',
  };
}
