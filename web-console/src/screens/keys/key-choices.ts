// What a new key can be given: every scope with its one-line description (from
// shared/identity/scopes.ts, the gateway's own list), presets for the keys people ask for most,
// and expiry choices. A key may grant only scopes it holds (createApiKey refuses others).
import {
  ALL_SCOPES,
  SCOPE_DESCRIPTIONS,
  SCOPES,
  type Scope,
} from '../../../../shared/identity/scopes.ts';

export const SCOPE_CHOICES: readonly { scope: Scope; description: string }[] = ALL_SCOPES.map(
  (scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] }),
);

export interface ScopePreset {
  readonly label: string;
  readonly scopes: readonly Scope[];
}

export const SCOPE_PRESETS: readonly ScopePreset[] = [
  { label: 'Approver', scopes: [SCOPES.APPROVALS_DECIDE] },
  { label: 'Kill only', scopes: [SCOPES.AGENTS_KILL] },
  { label: 'Auditor', scopes: [SCOPES.AUDIT_READ] },
  { label: 'Agent runtime', scopes: [SCOPES.AGENTS_EXECUTE] },
];

/** Expiry choices; `custom` asks for a date and time. */
export const EXPIRY_CHOICES = [
  { value: 'never', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
  { value: 'custom', label: 'On a date…' },
] as const;

export type ExpiryChoice = (typeof EXPIRY_CHOICES)[number]['value'];

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The expiry to send (ISO 8601), null for none, or why the custom date cannot be one. `custom` is
 * the value of a datetime-local input: the browser's local time.
 */
export function expiryOf(
  choice: ExpiryChoice,
  custom: string,
  now = Date.now(),
): { expiresAt: string | null } | { error: string } {
  if (choice === 'never') return { expiresAt: null };
  if (choice !== 'custom')
    return { expiresAt: new Date(now + Number(choice) * DAY_MS).toISOString() };
  const at = new Date(custom);
  if (!custom || Number.isNaN(at.getTime())) return { error: 'Choose a date and time' };
  if (at.getTime() <= now) return { error: 'Must be in the future' };
  return { expiresAt: at.toISOString() };
}
