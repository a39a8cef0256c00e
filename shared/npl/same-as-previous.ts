// The warning for a version that changes nothing: a document equal to the previous published
// version of its policy apart from `version`. Publishing it stays allowed (re-releasing the same
// rules can be meant), but pinning it decides nothing differently, which an author who meant to
// change a rule wants to hear before publishing. The engine alone cannot tell: the registry that
// knows the previous version (the gateway's, per tenant) asks.
import { canonicalJson } from '../json/canonical-json.js';
import { isRecord } from '../json/is-record.js';
import { readPolicyText } from './document-text.js';
import type { NplIssue } from './errors.js';
import type { NplPolicy } from './types.js';
import { formatPolicyUri } from './uri.js';

/** A published version: its number and its document in canonical form. */
export interface PublishedPolicyVersion {
  readonly version: string;
  readonly document: unknown;
}

/**
 * `same_as_previous` at `version` (with its position in `source` when it is text) when `policy`
 * equals `previous` but for its version; null otherwise, and for the same version.
 */
export function sameAsPreviousWarning(
  policy: NplPolicy,
  previous: PublishedPolicyVersion,
  source: string | object,
): NplIssue | null {
  if (previous.version === policy.version || !isRecord(previous.document)) return null;
  const reversioned = { ...previous.document, version: policy.version };
  if (canonicalJson(reversioned) !== canonicalJson(policy)) return null;
  const uri = formatPolicyUri({ name: policy.policyName, version: policy.version });
  const previousUri = formatPolicyUri({ name: policy.policyName, version: previous.version });
  const text = typeof source === 'string' ? readPolicyText(source) : undefined;
  const at = text === undefined || Array.isArray(text) ? undefined : text.locate(['version']);
  return {
    code: 'same_as_previous',
    message: `${uri} is identical to ${previousUri} apart from its version: it changes no rule`,
    path: ['version'],
    hint: `edit the rules before publishing, or keep ${previousUri}, which decides the same`,
    ...(at === undefined ? {} : { source: at }),
  };
}
