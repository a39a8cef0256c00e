// The egress policy: which addresses the gateway may open a connection to (DESIGN.md §12,
// docs/security.md "Egress"). Pure: the operator's lists are parsed once at start into ranges and
// host-name patterns; `decideEgress` decides one (host, address) pair with integer comparisons.
//
// Precedence, first match wins:
//   1. the deny list (AGENT_GATEWAY_EGRESS_DENY): a range holding the address, or a name pattern
//      matching the host;
//   2. an exact allow of a built-in never-contacted address: an allow range holding the address
//      that lies entirely within every never-list range holding it (allowing 169.254.169.254
//      releases the metadata address; allowing 0.0.0.0/0 or 169.254.0.0/16 does not);
//   3. the never-list: link-local, 0.0.0.0/8, multicast and the cloud metadata addresses;
//   4. the allow list (AGENT_GATEWAY_EGRESS_ALLOW): a range holding the address or a name pattern
//      matching the host;
//   5. the defaults: the special-purpose ranges no MCP server lives on (reserved, documentation,
//      benchmarking, 6to4/Teredo, discard) are refused; everything else is allowed — loopback,
//      RFC 1918, ULA and 100.64/10 (self-hosted gateways front internal servers) and public
//      internet addresses (upstream MCP servers on the internet work out of the box).
// Addresses are decided in their canonical form (addresses.ts): an IPv4-mapped, -compatible or
// NAT64 address is decided as its IPv4 address, in the lists as on the wire.
import {
  canonicalAddress,
  formatIpRange,
  type IpAddress,
  type IpRange,
  parseIpRange,
  rangeContains,
  rangeWithin,
} from './addresses.js';

export const EGRESS_ALLOW_VARIABLE = 'AGENT_GATEWAY_EGRESS_ALLOW';
export const EGRESS_DENY_VARIABLE = 'AGENT_GATEWAY_EGRESS_DENY';

/** A host-name pattern: `example.com` (that name) or `*.example.com` (any name below it). */
export interface HostPattern {
  readonly name: string;
  readonly wildcard: boolean;
}

export interface EgressList {
  readonly ranges: readonly IpRange[];
  readonly names: readonly HostPattern[];
}

export interface EgressPolicy {
  readonly allow: EgressList;
  readonly deny: EgressList;
}

/** Why an address is refused: the setting or built-in rule that decided. */
export type EgressRefusalRule = 'deny_list' | 'never' | 'reserved';
/** Why an address is allowed. */
export type EgressAllowRule = 'allow_exact' | 'allow_list' | 'default';

export type EgressDecision =
  | { readonly allowed: true; readonly rule: EgressAllowRule }
  | { readonly allowed: false; readonly rule: EgressRefusalRule };

function ranges(...texts: string[]): readonly IpRange[] {
  return texts.map((text) => {
    const range = parseIpRange(text);
    if (range === null || 'problem' in range) throw new Error(`bad built-in range ${text}`);
    return range;
  });
}

/** Never contacted unless listed exactly in the allow list (step 2). */
export const NEVER_RANGES: readonly IpRange[] = ranges(
  '0.0.0.0/8', // "this network": connecting to it reaches the gateway's own host
  '169.254.0.0/16', // IPv4 link-local
  '224.0.0.0/4', // IPv4 multicast
  'fe80::/10', // IPv6 link-local
  'ff00::/8', // IPv6 multicast
  '169.254.169.254', // cloud metadata (AWS, GCP, Azure, OpenStack, …)
  'fd00:ec2::254', // AWS metadata over IPv6
  '100.100.100.200', // Alibaba Cloud metadata
);

/** Refused by default, allowed by the allow list (step 5). */
export const RESERVED_RANGES: readonly IpRange[] = ranges(
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation (TEST-NET-1)
  '192.88.99.0/24', // 6to4 relay anycast (deprecated)
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation (TEST-NET-2)
  '203.0.113.0/24', // documentation (TEST-NET-3)
  '240.0.0.0/4', // reserved, and the limited broadcast address
  '100::/64', // discard-only
  '2001::/23', // IETF protocol assignments (Teredo among them)
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4: carries an IPv4 address a relay would reach
  '3fff::/20', // documentation
);

/** What the defaults allow explicitly (besides public addresses): for docs and tests. */
export const DEFAULT_PRIVATE_RANGES: readonly IpRange[] = ranges(
  '127.0.0.0/8',
  '::1',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  'fc00::/7',
  '100.64.0.0/10',
);

export const EMPTY_EGRESS_POLICY: EgressPolicy = {
  allow: { ranges: [], names: [] },
  deny: { ranges: [], names: [] },
};

const LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
const HOST_NAME = new RegExp(`^(?:\\*\\.)?(?:${LABEL}\\.)*${LABEL}$`);

/** A host name as compared: lower case, without the trailing dot of a fully qualified name. */
export function normalizeHostName(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

export interface EgressListProblem {
  readonly entry: string;
  readonly problem: string;
}

/**
 * A comma-separated list of CIDR ranges, single addresses and host-name patterns (blanks around
 * entries ignored). Every invalid entry is reported, none is dropped silently.
 */
export function parseEgressList(text: string | undefined): {
  readonly list: EgressList;
  readonly problems: readonly EgressListProblem[];
} {
  const rangesFound: IpRange[] = [];
  const names: HostPattern[] = [];
  const problems: EgressListProblem[] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const range = parseIpRange(entry);
    if (range !== null) {
      if ('problem' in range) problems.push({ entry, problem: range.problem });
      else rangesFound.push(range);
      continue;
    }
    const name = normalizeHostName(entry);
    if (name.length > 253 || !HOST_NAME.test(name) || /^[\d.]+$/.test(name)) {
      problems.push({
        entry,
        problem: 'expected a CIDR range, an IP address, a host name or *.domain',
      });
      continue;
    }
    names.push(
      name.startsWith('*.') ? { name: name.slice(1), wildcard: true } : { name, wildcard: false },
    );
  }
  return { list: { ranges: rangesFound, names }, problems };
}

function matchesName(patterns: readonly HostPattern[], host: string | null): boolean {
  if (host === null || patterns.length === 0) return false;
  const name = normalizeHostName(host);
  for (const pattern of patterns) {
    // A wildcard's name keeps its leading dot: `*.example.com` matches below it, not the apex.
    if (pattern.wildcard ? name.endsWith(pattern.name) : name === pattern.name) return true;
  }
  return false;
}

function inAny(list: readonly IpRange[], address: IpAddress): boolean {
  for (const range of list) if (rangeContains(range, address)) return true;
  return false;
}

/**
 * Decides one address the gateway is about to connect to. `host` is the host name it was resolved
 * from (null for an IP literal): name patterns apply to it, ranges to the address.
 */
export function decideEgress(
  policy: EgressPolicy,
  host: string | null,
  address: IpAddress,
): EgressDecision {
  const target = canonicalAddress(address);
  if (inAny(policy.deny.ranges, target) || matchesName(policy.deny.names, host)) {
    return { allowed: false, rule: 'deny_list' };
  }
  const never = NEVER_RANGES.filter((range) => rangeContains(range, target));
  if (never.length > 0) {
    const exact = policy.allow.ranges.some(
      (allowed) =>
        rangeContains(allowed, target) && never.every((builtIn) => rangeWithin(allowed, builtIn)),
    );
    return exact ? { allowed: true, rule: 'allow_exact' } : { allowed: false, rule: 'never' };
  }
  if (inAny(policy.allow.ranges, target) || matchesName(policy.allow.names, host)) {
    return { allowed: true, rule: 'allow_list' };
  }
  if (inAny(RESERVED_RANGES, target)) return { allowed: false, rule: 'reserved' };
  return { allowed: true, rule: 'default' };
}

/** Whether the deny list names `host` itself: refused before it is even resolved. */
export function isHostNameDenied(policy: EgressPolicy, host: string): boolean {
  return matchesName(policy.deny.names, host);
}

/** A short reason for a refusal, naming the setting that would change it (safe to return): it
 *  names the host as the URL does, never what a name resolved to. */
export function describeEgressRefusal(
  host: string,
  rule: EgressRefusalRule,
  resolved: boolean,
): string {
  const subject = resolved ? `${host} resolves to` : `${host} is`;
  switch (rule) {
    case 'deny_list':
      return resolved
        ? `${subject} an address refused by ${EGRESS_DENY_VARIABLE}`
        : `${subject} refused by ${EGRESS_DENY_VARIABLE}`;
    case 'never':
      return (
        `${subject} a link-local, multicast, unspecified or cloud metadata address, never ` +
        `contacted unless listed exactly in ${EGRESS_ALLOW_VARIABLE}`
      );
    case 'reserved':
      return `${subject} a reserved address, contacted only when ${EGRESS_ALLOW_VARIABLE} lists it`;
  }
}

/** The policy's lists as text, for the start log line. */
export function describeEgressPolicy(policy: EgressPolicy): { allow: string[]; deny: string[] } {
  const text = (list: EgressList) => [
    ...list.ranges.map(formatIpRange),
    ...list.names.map((pattern) => (pattern.wildcard ? `*${pattern.name}` : pattern.name)),
  ];
  return { allow: text(policy.allow), deny: text(policy.deny) };
}
