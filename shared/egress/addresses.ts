// IP addresses and CIDR ranges as numbers, for the egress policy (docs/security.md, "Egress").
// An address is a family and a bigint; an IPv6 address that carries an IPv4 address (mapped
// `::ffff:a.b.c.d`, compatible `::a.b.c.d`, the NAT64 well-known prefix `64:ff9b::/96`) is
// decided as that IPv4 address, because that is where the packets go: `canonicalAddress` does
// the unwrapping, so no rule can be sidestepped by writing the same host in another form.
// Parsing is strict (no octal or hex IPv4 parts, no zone ids): what is not an address here is
// treated as a host name, and a host name is resolved before anything is contacted.

export type IpFamily = 4 | 6;

export interface IpAddress {
  readonly family: IpFamily;
  readonly value: bigint;
}

export interface IpRange {
  readonly family: IpFamily;
  /** The network address (host bits zero). */
  readonly base: bigint;
  readonly prefix: number;
}

const BITS: Record<IpFamily, number> = { 4: 32, 6: 128 };
const V4_OCTET = /^(?:0|[1-9]\d{0,2})$/;
const HEXTET = /^[0-9a-fA-F]{1,4}$/;

/** A dotted-quad IPv4 address (each part 0-255, no leading zeros); null for anything else. */
export function parseIpv4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!V4_OCTET.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = (value << 8n) | BigInt(octet);
  }
  return value;
}

/** An IPv6 address (RFC 4291 text forms, an embedded dotted quad allowed); null otherwise. */
export function parseIpv6(text: string): bigint | null {
  if (text.length === 0 || text.length > 45) return null;
  let head = text;
  let tail: bigint | null = null;
  const lastColon = text.lastIndexOf(':');
  if (text.indexOf('.', lastColon) >= 0) {
    tail = parseIpv4(text.slice(lastColon + 1));
    if (tail === null) return null;
    // Keep the colon(s) before the quad so `::1.2.3.4` still reads as `::` followed by a group.
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (part: string): string[] | null => {
    if (part === '') return [];
    const groups = part.split(':');
    return groups.every((group) => HEXTET.test(group)) ? groups : null;
  };
  const left = groupsOf(halves[0]!);
  const right = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (left === null || right === null) return null;
  const present = left.length + right.length;
  if (halves.length === 1 ? present !== 8 : present > 7) return null;
  const groups = [...left, ...Array<string>(8 - present).fill('0'), ...right];
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  if (tail !== null) value = (value & ~0xffff_ffffn) | tail;
  return value;
}

/** An IP literal of either family (IPv6 with or without brackets), as written; null otherwise. */
export function parseIpAddress(text: string): IpAddress | null {
  const v4 = parseIpv4(text);
  if (v4 !== null) return { family: 4, value: v4 };
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const v6 = parseIpv6(bare);
  return v6 === null ? null : { family: 6, value: v6 };
}

/** The high 96 bits of the NAT64 well-known prefix 64:ff9b::/96. */
const NAT64_HIGH = 0x0064_ff9bn << 64n;

/**
 * The address packets to `address` reach: an IPv4-mapped, IPv4-compatible or NAT64 IPv6 address
 * becomes its IPv4 address. `::1` (loopback) is not an IPv4-compatible address and stays IPv6;
 * `::` is, and becomes 0.0.0.0 (both mean "this host").
 */
export function canonicalAddress(address: IpAddress): IpAddress {
  if (address.family === 4) return address;
  const value = address.value;
  const high = value >> 32n;
  const low = value & 0xffff_ffffn;
  if (high === 0xffffn) return { family: 4, value: low }; // ::ffff:0:0/96
  if (high === 0n && value !== 1n) return { family: 4, value: low };
  if (high === NAT64_HIGH) return { family: 4, value: low };
  return address;
}

/** `a.b.c.d/n` or `v6/n` (or a single address: a /32 or /128), canonical: host bits zero. */
export function parseIpRange(text: string): IpRange | { readonly problem: string } | null {
  const slash = text.indexOf('/');
  const addressText = slash < 0 ? text : text.slice(0, slash);
  const parsed = parseIpAddress(addressText);
  if (parsed === null) return null;
  const bits = BITS[parsed.family];
  let prefix = bits;
  if (slash >= 0) {
    const prefixText = text.slice(slash + 1);
    if (!/^(?:0|[1-9]\d{0,2})$/.test(prefixText) || Number(prefixText) > bits) {
      return { problem: `the prefix length must be 0 to ${bits}` };
    }
    prefix = Number(prefixText);
  }
  const host = (1n << BigInt(bits - prefix)) - 1n;
  if ((parsed.value & host) !== 0n) {
    const base = formatIpAddress({ family: parsed.family, value: parsed.value & ~host });
    return { problem: `host bits are set (the network is ${base}/${prefix})` };
  }
  return toCanonicalRange({ family: parsed.family, base: parsed.value, prefix });
}

/** A range inside ::ffff:0:0/96 (or the other IPv4-carrying prefixes) as the IPv4 range it is. */
function toCanonicalRange(range: IpRange): IpRange {
  if (range.family === 6 && range.prefix >= 96) {
    const unwrapped = canonicalAddress({ family: 6, value: range.base });
    // `::1` and `::` are single addresses: ::/128 is 0.0.0.0, but ::1/128 stays IPv6 loopback.
    if (unwrapped.family === 4 && (range.prefix === 128 || range.base !== 0n)) {
      return { family: 4, base: unwrapped.value, prefix: range.prefix - 96 };
    }
  }
  return range;
}

export function rangeContains(range: IpRange, address: IpAddress): boolean {
  if (range.family !== address.family) return false;
  const shift = BigInt(BITS[range.family] - range.prefix);
  return address.value >> shift === range.base >> shift;
}

/** Whether `inner` lies entirely within `outer` (equal ranges included). */
export function rangeWithin(inner: IpRange, outer: IpRange): boolean {
  return (
    inner.family === outer.family &&
    inner.prefix >= outer.prefix &&
    rangeContains(outer, { family: inner.family, value: inner.base })
  );
}

export function formatIpAddress(address: IpAddress): string {
  if (address.family === 4) {
    const v = Number(address.value);
    return `${(v >>> 24) & 255}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  }
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) {
    groups.push(((address.value >> shift) & 0xffffn).toString(16));
  }
  // The longest run of two or more zero groups becomes `::` (RFC 5952).
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8; ) {
    let end = start;
    while (end < 8 && groups[end] === '0') end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end === start ? start + 1 : end;
  }
  if (bestStart < 0) return groups.join(':');
  return `${groups.slice(0, bestStart).join(':')}::${groups.slice(bestStart + bestLength).join(':')}`;
}

export function formatIpRange(range: IpRange): string {
  return `${formatIpAddress({ family: range.family, value: range.base })}/${range.prefix}`;
}
