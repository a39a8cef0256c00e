// Version-pinned policy URIs: svc://<policy-name>@<major.minor.patch>. Unpinned or malformed
// URIs are errors; nothing is normalized (no trimming, no lower-casing, no padded versions).
import { NplError } from './errors.js';

export const NPL_URI_SCHEME = 'svc';
export const KEBAB_CASE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const URI = /^svc:\/\/([a-z0-9]+(?:-[a-z0-9]+)*)@((?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*))$/;

/** The form of a policy URI, as messages state it. */
export const POLICY_URI_FORM = 'svc://name@semver';

/** Exactly `svc://name@semver`: for checks that need no error for anything else. */
export const POLICY_URI_PATTERN: RegExp = URI;

export interface NplPolicyRef {
  readonly name: string;
  readonly version: string;
}

function invalidUri(message: string, hint: string): NplError {
  return new NplError('NPL_INVALID_URI', [{ code: 'invalid_uri', message, path: [], hint }]);
}

/** Splits `svc://name@1.2.3`; throws `NplError` (NPL_INVALID_URI) on anything else. */
export function parsePolicyUri(uri: string): NplPolicyRef {
  const match = typeof uri === 'string' ? URI.exec(uri) : null;
  if (match) return { name: match[1]!, version: match[2]! };
  const text = typeof uri === 'string' ? uri : String(uri);
  const example = 'svc://nato-prou-strict-financial@1.0.0';
  // The message says what the form is, since it is often all a client shows (GraphQL issues).
  if (typeof uri === 'string' && URI.test(`${uri}@0.0.0`)) {
    throw invalidUri(
      `malformed policy URI ${JSON.stringify(text)}: not pinned to a version; expected ${POLICY_URI_FORM}, e.g. ${text}@1.0.0`,
      `pin an exact version, e.g. ${text}@1.0.0`,
    );
  }
  throw invalidUri(
    `malformed policy URI ${JSON.stringify(text)}: expected ${POLICY_URI_FORM}, e.g. ${example}`,
    `write svc://<policy-name>@<major.minor.patch>, e.g. ${example}`,
  );
}

/** `svc://name@version`; throws `NplError` (NPL_INVALID_URI) if either part is malformed. */
export function formatPolicyUri(ref: NplPolicyRef): string {
  const uri = `${NPL_URI_SCHEME}://${ref.name}@${ref.version}`;
  parsePolicyUri(uri);
  return uri;
}
