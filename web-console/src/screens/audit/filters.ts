// What the operator filters the trail by, and how that becomes the variables of the auditTrail
// query and subscription (which take the same filters, so the live tail shows only what the
// table would list). Times are typed in the browser's zone and sent as UTC instants. The agent is
// typed text (a name or an id, which the server resolves) or an agent picked from the list.
import { AUDIT_ACTIONS } from '../../../../shared/audit/actions.ts';

export interface AuditFilters {
  readonly action: string;
  /** The agent filter's text: a name or an id. */
  readonly agent: string;
  /** The agent picked from the list (its name is `agent`); empty when the text was typed. */
  readonly agentId: string;
  readonly decision: string;
  /** `datetime-local` text (local time, no zone), or empty. */
  readonly from: string;
  readonly to: string;
}

export const NO_FILTERS: AuditFilters = {
  action: '',
  agent: '',
  agentId: '',
  decision: '',
  from: '',
  to: '',
};

/** Every action the gateway writes (docs/audit.md); other producers' actions can be typed. */
export const KNOWN_ACTIONS: readonly string[] = Object.values(AUDIT_ACTIONS).sort();

/** Values of metadata.decision the gateway writes. */
export const KNOWN_DECISIONS: readonly string[] = [
  'deny',
  'allow',
  'require_human_approval',
  'approved',
  'rejected',
];

export interface AuditFilterVariables {
  action?: string;
  agentId?: string;
  agent?: string;
  decision?: string;
  from?: string;
  to?: string;
}

/** A `datetime-local` value as an RFC 3339 instant; undefined when empty or not a time. */
export function localTimeToInstant(text: string): string | undefined {
  if (!text) return undefined;
  const time = new Date(text);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

export function filterVariables(filters: AuditFilters): AuditFilterVariables {
  const variables: AuditFilterVariables = {};
  if (filters.action.trim()) variables.action = filters.action.trim();
  if (filters.agentId) variables.agentId = filters.agentId;
  else if (filters.agent.trim()) variables.agent = filters.agent.trim();
  if (filters.decision) variables.decision = filters.decision;
  const from = localTimeToInstant(filters.from);
  const to = localTimeToInstant(filters.to);
  if (from) variables.from = from;
  if (to) variables.to = to;
  return variables;
}
