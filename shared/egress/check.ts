// The egress check of one host as the gateway is about to contact it: an IP literal is decided as
// it is; a host name is refused outright when the deny list names it, else resolved through the
// injected resolver (node's dns.lookup in production, a table in tests) and every address it
// resolves to is decided. One forbidden address refuses the host: which of several addresses a
// connection ends up using is the socket's choice (happy eyeballs), so allowing a mix would make
// the outcome depend on it, and a name that resolves to a metadata address next to a public one
// is what DNS rebinding looks like. The connector (data-plane/upstream/egress-connector.ts) then
// connects only to the addresses checked here.
import { canonicalAddress, formatIpAddress, parseIpAddress } from './addresses.js';
import {
  decideEgress,
  describeEgressRefusal,
  type EgressPolicy,
  type EgressRefusalRule,
  isHostNameDenied,
} from './policy.js';

export interface ResolvedAddress {
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

/** Every address a host name resolves to (like dns.lookup with `all: true`); rejects when none. */
export type EgressResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** What the gateway needs to check a connection: the policy and how names are resolved. */
export interface Egress {
  readonly policy: EgressPolicy;
  readonly resolve: EgressResolver;
}

export interface EgressRefusal {
  /** The host as the URL names it (brackets removed from an IPv6 literal). */
  readonly host: string;
  /** The forbidden address (canonical: an IPv4-mapped one as IPv4); null when the deny list names the host itself. */
  readonly address: string | null;
  readonly rule: EgressRefusalRule;
  /** A short reason naming the setting, safe to return to the caller. */
  readonly detail: string;
}

export type EgressCheck =
  | { readonly allowed: true; readonly addresses: readonly ResolvedAddress[] }
  | { readonly allowed: false; readonly refusal: EgressRefusal };

/** The host of a URL as resolved and decided: URL.hostname without IPv6 brackets. */
export function egressHostOf(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function refuse(
  host: string,
  address: string | null,
  rule: EgressRefusalRule,
  resolved: boolean,
): EgressCheck {
  return {
    allowed: false,
    refusal: { host, address, rule, detail: describeEgressRefusal(host, rule, resolved) },
  };
}

/** Checks `host` (an IP literal or a host name); a resolver failure rejects as it came. */
export async function checkEgress(egress: Egress, host: string): Promise<EgressCheck> {
  const literal = parseIpAddress(host);
  if (literal !== null) {
    const decision = decideEgress(egress.policy, null, literal);
    if (!decision.allowed)
      return refuse(host, formatIpAddress(canonicalAddress(literal)), decision.rule, false);
    return { allowed: true, addresses: [{ address: host, family: literal.family }] };
  }
  if (isHostNameDenied(egress.policy, host)) return refuse(host, null, 'deny_list', false);
  const resolved = await egress.resolve(host);
  if (resolved.length === 0) throw new Error(`${host} resolved to no address`);
  for (const entry of resolved) {
    const address = parseIpAddress(entry.address);
    // A resolver answering something that is not an address is not trusted with a connection.
    if (address === null) throw new Error(`${host} resolved to something that is not an address`);
    const decision = decideEgress(egress.policy, host, address);
    if (!decision.allowed)
      return refuse(host, formatIpAddress(canonicalAddress(address)), decision.rule, true);
  }
  return { allowed: true, addresses: resolved };
}
