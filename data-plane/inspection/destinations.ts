// Destinations in argument strings (URLs and email addresses) checked against a domain allow-list.
// Pure module: no I/O, no framework imports (node:url's domainToASCII and URL are pure).
//
// URLs are found by their `://`; the scheme is the run of scheme characters before it (file: is
// local and skipped). The authority ends where WHATWG URL parsing ends it for http(s) (/ ? # \)
// or at whitespace, quotes, ( ) < > , ; | ^ (URLs in prose); userinfo is dropped (`https://good.com@evil.io/` goes to
// evil.io) and so is the port. Plain lowercase ASCII hosts are checked directly; anything else
// (percent-encoding, non-ASCII, IPv6, numeric IPv4 forms such as 2130706433) goes through the
// WHATWG host parser, and a host it rejects counts as not allowed (fail closed). Email addresses
// are found by their `@` (this also catches mailto:). Schemeless host names are not looked for:
// "file.txt" would look like a domain.

import { domainToASCII } from 'node:url';
import type { Finding } from './types.js';

const MAX_AUTHORITY = 512;
const MAX_LOCAL_PART = 64;
const MAX_DOMAIN = 253;

/** A compiled allow-list: a domain allows itself and its subdomains; IP literals only themselves. */
export class DomainAllowList {
  private readonly domains = new Set<string>();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      if (typeof entry !== 'string') throw new TypeError('allowed domains must be strings');
      let text = entry.trim();
      const scheme = text.indexOf('://');
      if (scheme >= 0) text = text.slice(scheme + 3);
      text = text.replace(/[/?#].*$/s, '');
      if (text.startsWith('*.')) text = text.slice(2);
      if (text.startsWith('.')) text = text.slice(1);
      const host = text.startsWith('[')
        ? canonicalizeHost(text)
        : canonicalizeHost(stripPort(text));
      if (host === null || host === '') throw new RangeError(`invalid allowed domain: ${entry}`);
      this.domains.add(host);
    }
  }

  get size(): number {
    return this.domains.size;
  }

  /** `host` must be canonical (see canonicalizeHost). */
  allows(host: string): boolean {
    if (this.domains.has(host)) return true;
    if (isIpLiteral(host)) return false;
    let dot = host.indexOf('.');
    while (dot >= 0) {
      if (this.domains.has(host.slice(dot + 1))) return true;
      dot = host.indexOf('.', dot + 1);
    }
    return false;
  }
}

function isIpLiteral(host: string): boolean {
  if (host.startsWith('[')) return true;
  const last = host.slice(host.lastIndexOf('.') + 1);
  return last.length > 0 && /^\d+$/.test(last);
}

function stripPort(hostport: string): string {
  const colon = hostport.lastIndexOf(':');
  return colon < 0 ? hostport : hostport.slice(0, colon);
}

/** Plain [a-z0-9.-] labels whose last label is not numeric: no parser needed. */
function isPlainHost(host: string): boolean {
  let lastLabelNumeric = true;
  for (let i = 0; i < host.length; i++) {
    const c = host.charCodeAt(i);
    if (c === 46) {
      lastLabelNumeric = true;
    } else if ((c >= 97 && c <= 122) || c === 45 || c === 95) {
      lastLabelNumeric = false;
    } else if (c >= 65 && c <= 90) {
      return false;
    } else if (!(c >= 48 && c <= 57)) {
      return false;
    }
  }
  return !lastLabelNumeric;
}

/**
 * The canonical form of a host as a WHATWG URL parser would resolve it (lowercase, punycode,
 * IPv4 dotted quad, bracketed IPv6), without a trailing dot; null when it is not a valid host.
 */
export function canonicalizeHost(raw: string): string | null {
  let host = raw;
  if (host.length === 0 || host.length > MAX_AUTHORITY) return null;
  if (!isPlainHost(host)) {
    const lowered = host.toLowerCase();
    if (isPlainHost(lowered)) {
      host = lowered;
    } else {
      try {
        host = new URL(`http://${host}/`).hostname;
      } catch {
        return null;
      }
      if (!host.startsWith('[') && hasNonAscii(host)) host = domainToASCII(host) || host;
    }
  }
  while (host.endsWith('.')) host = host.slice(0, -1);
  return host === '' ? null : host;
}

function isSchemeChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 43 ||
    c === 45 ||
    c === 46
  );
}

function endsAuthority(c: number): boolean {
  return (
    c <= 32 ||
    c === 47 || // /
    c === 63 || // ?
    c === 35 || // #
    c === 92 || // \
    c === 34 ||
    c === 39 ||
    c === 96 ||
    c === 60 ||
    c === 62 ||
    c === 40 ||
    c === 41 ||
    c === 44 ||
    c === 59 ||
    c === 124 ||
    c === 94
  );
}

function isLocalChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 46 ||
    c === 95 ||
    c === 37 ||
    c === 43 ||
    c === 45
  );
}

function isDomainChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 46 ||
    c === 45 ||
    c >= 0x80
  );
}

const UNPARSEABLE: Finding = Object.freeze({
  kind: 'destination',
  detail: 'URL with an unparseable host',
});

/** Visits candidates; `take` returns false when the per-call candidate budget is spent. */
export function findDisallowedDestination(
  s: string,
  allow: DomainAllowList,
  take: () => boolean,
  budgetExceeded: Finding,
): Finding | null {
  let at = s.indexOf('://');
  while (at >= 0) {
    const found = checkUrl(s, at, allow, take, budgetExceeded);
    if (found !== null) return found;
    at = s.indexOf('://', at + 3);
  }
  at = s.indexOf('@');
  while (at >= 0) {
    const found = checkEmail(s, at, allow, take, budgetExceeded);
    if (found !== null) return found;
    at = s.indexOf('@', at + 1);
  }
  return null;
}

function checkUrl(
  s: string,
  at: number,
  allow: DomainAllowList,
  take: () => boolean,
  budgetExceeded: Finding,
): Finding | null {
  let a = at;
  while (a > 0 && at - a < 32 && isSchemeChar(s.charCodeAt(a - 1))) a--;
  while (a < at && !isAlpha(s.charCodeAt(a))) a++;
  if (a === at) return null;
  const scheme = s.slice(a, at).toLowerCase();
  if (scheme === 'file') return null;
  let b = at + 3;
  while (b < s.length && !endsAuthority(s.charCodeAt(b))) b++;
  if (b === at + 3) return null;
  if (!take()) return budgetExceeded;
  if (b - at - 3 > MAX_AUTHORITY) return UNPARSEABLE;
  let authority = s.slice(at + 3, b);
  const userinfo = authority.lastIndexOf('@');
  if (userinfo >= 0) authority = authority.slice(userinfo + 1);
  let host: string;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    host = close < 0 ? authority : authority.slice(0, close + 1);
  } else {
    const colon = authority.indexOf(':');
    host = colon < 0 ? authority : authority.slice(0, colon);
  }
  if (host === '') return null;
  const canonical = canonicalizeHost(host);
  if (canonical === null) return UNPARSEABLE;
  return allow.allows(canonical) ? null : destination(`${scheme} URL to ${canonical}`);
}

function checkEmail(
  s: string,
  at: number,
  allow: DomainAllowList,
  take: () => boolean,
  budgetExceeded: Finding,
): Finding | null {
  let a = at;
  while (a > 0 && at - a < MAX_LOCAL_PART && isLocalChar(s.charCodeAt(a - 1))) a--;
  if (a === at) return null;
  let b = at + 1;
  while (b < s.length && b - at <= MAX_DOMAIN && isDomainChar(s.charCodeAt(b))) b++;
  while (b > at + 1 && (s.charCodeAt(b - 1) === 46 || s.charCodeAt(b - 1) === 45)) b--;
  const domain = s.slice(at + 1, b);
  const dot = domain.lastIndexOf('.');
  if (dot <= 0) return null;
  const tld = domain.slice(dot + 1);
  if (!/^(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/i.test(tld) && !hasNonAscii(tld)) return null;
  if (!take()) return budgetExceeded;
  const canonical = canonicalizeHost(domain);
  if (canonical === null) return null;
  return allow.allows(canonical) ? null : destination(`email to ${canonical}`);
}

function hasNonAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return true;
  return false;
}

function isAlpha(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

function destination(detail: string): Finding {
  return { kind: 'destination', detail };
}
