// Secrets in argument strings. Pure module: no I/O, no framework imports.
//
// One forward pass over the string splits it into runs of token characters
// ([A-Za-z0-9_+/-] plus trailing `=` padding); each run of 16+ characters is checked against
// known credential shapes by prefix and length, then, if 32–512 characters long, by entropy.
// Fixed markers (PEM headers, connection-string keys) are found with indexOf. Findings name the
// kind of secret only, never the value.
//
// Two entry points share the rules: `findSecret` answers the data plane's hot path (first finding
// only, no allocation per run), `scanSecretSpans` reports where every secret is, for masking
// (mask-secrets.ts). They must agree on whether a string holds a secret (a test pins that).

import { isRecord } from '../json/is-record.js';
import type { Finding } from './types.js';

const secret = (detail: string): Finding => Object.freeze({ kind: 'secret', detail });
const PEM = secret('private key (PEM)');
const GCP = secret('GCP service account key');
const AZURE_KEY = secret('Azure storage account key');
const AZURE_SAS = secret('Azure SAS token');
const AWS_KEY_ID = secret('AWS access key id');
const AWS_SECRET = secret('AWS secret access key');
const GITHUB = secret('GitHub token');
const GITLAB = secret('GitLab token');
const SLACK = secret('Slack token');
const STRIPE = secret('Stripe secret key');
const SK = secret('API secret key (sk-)');
const GOOGLE = secret('Google API key');
const NPM = secret('npm token');
const JWT = secret('JWT');
const HIGH_ENTROPY = secret('high-entropy token');

const MIN_RUN = 16;
const MIN_ENTROPY_RUN = 32;
/** Longer runs are data blobs (base64 files), not credentials. */
const MAX_ENTROPY_RUN = 512;
const ENTROPY_THRESHOLD = 4.5;
const MAX_JWT_HEADER = 2048;

/** Prefix → minimum run length → finding. Checked in order. */
const PREFIXES: readonly (readonly [string, number, Finding])[] = [
  ['ghp_', 36, GITHUB],
  ['gho_', 36, GITHUB],
  ['ghu_', 36, GITHUB],
  ['ghs_', 36, GITHUB],
  ['ghr_', 36, GITHUB],
  ['github_pat_', 40, GITHUB],
  ['glpat-', 20, GITLAB],
  ['xoxb-', 15, SLACK],
  ['xoxa-', 15, SLACK],
  ['xoxp-', 15, SLACK],
  ['xoxr-', 15, SLACK],
  ['xoxs-', 15, SLACK],
  ['xoxe-', 15, SLACK],
  ['sk_live_', 24, STRIPE],
  ['rk_live_', 24, STRIPE],
  ['sk_test_', 24, STRIPE],
  ['rk_test_', 24, STRIPE],
  ['sk-', 32, SK],
  ['AIza', 39, GOOGLE],
  ['npm_', 40, NPM],
];

function isRunChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 95 ||
    c === 45 ||
    c === 43 ||
    c === 47
  );
}

function isUpperOrDigit(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** 8-4-4-4-12 hex digits. */
function isUuid(s: string, a: number, b: number): boolean {
  if (b - a !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = s.charCodeAt(a + i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
    } else if (!isHex(c)) return false;
  }
  return true;
}

/** Reused frequency table for the entropy computation. */
const counts = new Int32Array(128);

function looksRandom(s: string, a: number, b: number): boolean {
  let lower = false;
  let upper = false;
  let digit = false;
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i);
    counts[c]!++;
    if (c >= 97 && c <= 122) lower = true;
    else if (c >= 65 && c <= 90) upper = true;
    else if (c >= 48 && c <= 57) digit = true;
  }
  let sum = 0;
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i);
    const k = counts[c]!;
    if (k > 0) {
      sum += k * Math.log2(k);
      counts[c] = 0;
    }
  }
  const n = b - a;
  const entropy = Math.log2(n) - sum / n;
  return lower && upper && digit && entropy >= ENTROPY_THRESHOLD;
}

function jwtHeaderHasAlg(segment: string): boolean {
  try {
    const header: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isRecord(header) && typeof header.alg === 'string';
  } catch {
    return false;
  }
}

/** Key names that mark a 40-character value as an AWS secret access key. */
function isAwsSecretKey(key: string | undefined): boolean {
  if (key === undefined || key.length > 64) return false;
  const k = key.toLowerCase().replace(/[^a-z]/g, '');
  return k.includes('secretaccesskey') || k.includes('awssecret');
}

/**
 * The first secret in `s`, or null. `key` is the property name holding `s` (it marks AWS secret
 * access keys, which have no recognisable shape of their own).
 */
export function findSecret(s: string, key: string | undefined): Finding | null {
  const n = s.length;
  if (n < MIN_RUN) return null;
  if (hasPem(s)) return PEM;
  if (s.includes('"private_key"') && s.includes('service_account')) return GCP;
  if (hasKeyValue(s, 'AccountKey=', 40) || hasKeyValue(s, 'SharedAccessKey=', 40)) return AZURE_KEY;
  if (s.includes('sv=') && hasKeyValue(s, 'sig=', 20)) return AZURE_SAS;
  const awsKey = isAwsSecretKey(key);
  let i = 0;
  while (i < n) {
    if (!isRunChar(s.charCodeAt(i))) {
      i++;
      continue;
    }
    const a = i;
    while (i < n && isRunChar(s.charCodeAt(i))) i++;
    let b = i;
    while (b < n && b - i < 2 && s.charCodeAt(b) === 61) b++; // base64 padding
    if (b - a >= MIN_RUN || (s.startsWith('eyJ', a) && s.charCodeAt(b) === 46)) {
      const found = classifyRun(s, a, b, awsKey);
      if (found === JWT) return JWT;
      if (found !== null) return found;
    }
    i = b;
  }
  return null;
}

/** Receives one secret's span `[start, end)` of the scanned string and what it is. */
export type SecretSpanVisitor = (start: number, end: number, finding: Finding) => void;

/**
 * Reports every secret in `s`, in no particular order; spans may overlap (a PEM block's body
 * lines are runs too). Same rules and same `key` meaning as `findSecret`.
 */
export function scanSecretSpans(
  s: string,
  key: string | undefined,
  visit: SecretSpanVisitor,
): void {
  const n = s.length;
  if (n < MIN_RUN) return;
  const pem = visitPemSpans(s, visit);
  if (!pem && s.includes('"private_key"') && s.includes('service_account')) visit(0, n, GCP);
  visitKeyValueSpans(s, 'AccountKey=', 40, AZURE_KEY, visit);
  visitKeyValueSpans(s, 'SharedAccessKey=', 40, AZURE_KEY, visit);
  if (s.includes('sv=')) visitKeyValueSpans(s, 'sig=', 20, AZURE_SAS, visit);
  const awsKey = isAwsSecretKey(key);
  let i = 0;
  while (i < n) {
    if (!isRunChar(s.charCodeAt(i))) {
      i++;
      continue;
    }
    const a = i;
    while (i < n && isRunChar(s.charCodeAt(i))) i++;
    let b = i;
    while (b < n && b - i < 2 && s.charCodeAt(b) === 61) b++;
    if (b - a >= MIN_RUN || (s.startsWith('eyJ', a) && s.charCodeAt(b) === 46)) {
      const jwt = jwtEnd(s, a, b);
      if (jwt > 0) {
        visit(a, jwt, JWT);
        i = jwt;
        continue;
      }
      const found = classifyRun(s, a, b, awsKey);
      if (found !== null) visit(a, b, found);
    }
    i = b;
  }
}

/** The end of the JWT whose header run is `[a, b)` (after its signature), or -1. */
function jwtEnd(s: string, a: number, b: number): number {
  if (!s.startsWith('eyJ', a) || s.charCodeAt(b) !== 46 || b - a > MAX_JWT_HEADER) return -1;
  let c = b + 1;
  while (c < s.length && isRunChar(s.charCodeAt(c))) c++;
  if (c === b + 1 || s.charCodeAt(c) !== 46 || !jwtHeaderHasAlg(s.slice(a, b))) return -1;
  let d = c + 1;
  while (d < s.length && isRunChar(s.charCodeAt(d))) d++;
  return d;
}

function classifyRun(s: string, a: number, b: number, awsKey: boolean): Finding | null {
  const length = b - a;
  if (s.startsWith('eyJ', a) && s.charCodeAt(b) === 46 && length <= MAX_JWT_HEADER) {
    // header.payload.signature, each base64url; the header decodes to an object with `alg`.
    let c = b + 1;
    while (c < s.length && isRunChar(s.charCodeAt(c))) c++;
    if (c > b + 1 && s.charCodeAt(c) === 46 && jwtHeaderHasAlg(s.slice(a, b))) return JWT;
  }
  if (
    length === 20 &&
    (s.startsWith('AKIA', a) || s.startsWith('ASIA', a)) &&
    allUpperOrDigit(s, a, b)
  )
    return AWS_KEY_ID;
  for (const [prefix, min, found] of PREFIXES) {
    if (length >= min && s.startsWith(prefix, a)) return found;
  }
  if (awsKey && length === 40) return AWS_SECRET;
  if (length < MIN_ENTROPY_RUN || length > MAX_ENTROPY_RUN || isUuid(s, a, b)) return null;
  return looksRandom(s, a, b) ? HIGH_ENTROPY : null;
}

function allUpperOrDigit(s: string, a: number, b: number): boolean {
  for (let i = a; i < b; i++) if (!isUpperOrDigit(s.charCodeAt(i))) return false;
  return true;
}

function hasPem(s: string): boolean {
  let at = s.indexOf('-----BEGIN ');
  while (at >= 0) {
    const end = s.indexOf('-----', at + 11);
    if (end < 0) return false;
    if (end - at <= 64) {
      const label = s.slice(at + 11, end);
      if (label.endsWith('PRIVATE KEY') || label.endsWith('PRIVATE KEY BLOCK')) return true;
    }
    at = s.indexOf('-----BEGIN ', at + 11);
  }
  return false;
}

/** Each private-key PEM block, from its BEGIN line through its END line (or the string's end). */
function visitPemSpans(s: string, visit: SecretSpanVisitor): boolean {
  let found = false;
  let at = s.indexOf('-----BEGIN ');
  while (at >= 0) {
    const end = s.indexOf('-----', at + 11);
    if (end < 0) break;
    let next = at + 11;
    if (end - at <= 64) {
      const label = s.slice(at + 11, end);
      if (label.endsWith('PRIVATE KEY') || label.endsWith('PRIVATE KEY BLOCK')) {
        found = true;
        const footer = s.indexOf('-----END ', end + 5);
        const close = footer < 0 ? -1 : s.indexOf('-----', footer + 9);
        const stop = close < 0 ? s.length : close + 5;
        visit(at, stop, PEM);
        next = stop;
      }
    }
    at = s.indexOf('-----BEGIN ', next);
  }
  return found;
}

/** The value of each `name` followed by at least `min` base64 characters. */
function visitKeyValueSpans(
  s: string,
  name: string,
  min: number,
  finding: Finding,
  visit: SecretSpanVisitor,
): void {
  let at = s.indexOf(name);
  while (at >= 0) {
    const start = at + name.length;
    let i = start;
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (!(isRunChar(c) || c === 61 || c === 37)) break;
      i++;
    }
    if (i - start >= min) visit(start, i, finding);
    at = s.indexOf(name, i);
  }
}

/** `name` followed by at least `min` base64 characters. */
function hasKeyValue(s: string, name: string, min: number): boolean {
  let at = s.indexOf(name);
  while (at >= 0) {
    let i = at + name.length;
    const start = i;
    while (i < s.length && i - start < min) {
      const c = s.charCodeAt(i);
      if (!(isRunChar(c) || c === 61 || c === 37)) break;
      i++;
    }
    if (i - start >= min) return true;
    at = s.indexOf(name, at + name.length);
  }
  return false;
}
