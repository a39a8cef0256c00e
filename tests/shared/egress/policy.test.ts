// The egress policy, pure: parsing of the operator's lists, the built-in defaults, the
// precedence of docs/security.md ("Egress"), and the IPv4-in-IPv6 forms decided as their IPv4.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkEgress,
  decideEgress,
  type EgressPolicy,
  EMPTY_EGRESS_POLICY,
  formatIpAddress,
  NEVER_RANGES,
  parseEgressList,
  parseIpAddress,
  parseIpRange,
} from '../../../shared/egress/index.js';
import { propertyRuns } from '../../support/property-runs.js';

function policyOf(allow = '', deny = ''): EgressPolicy {
  const a = parseEgressList(allow);
  const d = parseEgressList(deny);
  expect([...a.problems, ...d.problems]).toEqual([]);
  return { allow: a.list, deny: d.list };
}

function decide(policy: EgressPolicy, address: string, host: string | null = null) {
  const parsed = parseIpAddress(address);
  if (parsed === null) throw new Error(`not an address: ${address}`);
  return decideEgress(policy, host, parsed);
}

const v4 = fc.tuple(
  fc.integer({ min: 0, max: 255 }),
  fc.integer({ min: 0, max: 255 }),
  fc.integer({ min: 0, max: 255 }),
  fc.integer({ min: 0, max: 255 }),
);
const quad = (o: [number, number, number, number]) => o.join('.');
const hex = (o: [number, number, number, number]) =>
  `${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;

describe('the defaults', () => {
  it.each([
    ['127.0.0.1'],
    ['::1'],
    ['10.1.2.3'],
    ['172.16.0.1'],
    ['192.168.1.1'],
    ['fd12:3456::1'],
    ['100.64.0.1'],
    ['8.8.8.8'],
    ['2606:4700:4700::1111'],
  ])('allow loopback, private and public address %s', (address) => {
    expect(decide(EMPTY_EGRESS_POLICY, address)).toEqual({ allowed: true, rule: 'default' });
  });

  it.each([
    ['169.254.169.254'],
    ['169.254.1.1'],
    ['fe80::1'],
    ['0.0.0.0'],
    ['0.1.2.3'],
    ['224.0.0.1'],
    ['239.255.255.250'],
    ['ff02::1'],
    ['fd00:ec2::254'],
    ['100.100.100.200'],
    ['::'],
  ])('never contact %s', (address) => {
    expect(decide(EMPTY_EGRESS_POLICY, address)).toEqual({ allowed: false, rule: 'never' });
  });

  it.each([['240.0.0.1'], ['255.255.255.255'], ['192.0.2.10'], ['2001:db8::1'], ['2002::1']])(
    'refuse reserved address %s unless allowed',
    (address) => {
      expect(decide(EMPTY_EGRESS_POLICY, address)).toEqual({ allowed: false, rule: 'reserved' });
      expect(decide(policyOf(address), address)).toEqual({ allowed: true, rule: 'allow_list' });
    },
  );
});

describe('the precedence', () => {
  it('the deny list wins over everything, the exact allow of a built-in address included', () => {
    const policy = policyOf('169.254.169.254,10.0.0.0/8', '169.254.169.254,10.0.0.0/8');
    expect(decide(policy, '169.254.169.254')).toEqual({ allowed: false, rule: 'deny_list' });
    expect(decide(policy, '10.0.0.1')).toEqual({ allowed: false, rule: 'deny_list' });
  });

  it('an exact allow releases a never-listed address, a wider one does not', () => {
    expect(decide(policyOf('169.254.169.254'), '169.254.169.254').allowed).toBe(true);
    expect(decide(policyOf('169.254.169.254/32'), '169.254.169.254').allowed).toBe(true);
    expect(decide(policyOf('::ffff:169.254.169.254'), '169.254.169.254').allowed).toBe(true);
    // The link-local range releases link-local, but the metadata address is a never entry too.
    expect(decide(policyOf('169.254.0.0/16'), '169.254.1.1').allowed).toBe(true);
    expect(decide(policyOf('169.254.0.0/16'), '169.254.169.254')).toEqual({
      allowed: false,
      rule: 'never',
    });
    expect(decide(policyOf('0.0.0.0/0'), '169.254.1.1')).toEqual({ allowed: false, rule: 'never' });
    expect(decide(policyOf('100.64.0.0/10'), '100.100.100.200')).toEqual({
      allowed: false,
      rule: 'never',
    });
  });

  it('a host name in the allow list does not release a never-listed address', () => {
    const policy = policyOf('mcp.internal');
    expect(decide(policy, '169.254.169.254', 'mcp.internal')).toEqual({
      allowed: false,
      rule: 'never',
    });
    expect(decide(policy, '240.0.0.1', 'mcp.internal')).toEqual({
      allowed: true,
      rule: 'allow_list',
    });
  });

  it('the deny list closes loopback and private ranges, by range or by name', () => {
    const policy = policyOf('', '127.0.0.0/8,::1,10.0.0.0/8,*.corp.example,db.example');
    expect(decide(policy, '127.0.0.1').allowed).toBe(false);
    expect(decide(policy, '::ffff:127.0.0.1').allowed).toBe(false);
    expect(decide(policy, '::1').allowed).toBe(false);
    expect(decide(policy, '8.8.8.8', 'a.b.corp.example').allowed).toBe(false);
    expect(decide(policy, '8.8.8.8', 'DB.Example.').allowed).toBe(false);
    expect(decide(policy, '8.8.8.8', 'corp.example').allowed).toBe(true); // not the apex
    expect(decide(policy, '8.8.8.8', 'xdb.example').allowed).toBe(true);
  });
});

describe('IPv4 inside IPv6', () => {
  it('every IPv4-mapped, -compatible and NAT64 form decides as its IPv4 address', () => {
    const policy = policyOf('192.0.2.0/25,169.254.169.254', '10.9.0.0/16,fd00::/8');
    fc.assert(
      fc.property(v4, fc.constantFrom('::ffff:', '::', '64:ff9b::'), (octets, prefix) => {
        const expected = decide(policy, quad(octets));
        const value = parseIpAddress(quad(octets))!.value;
        // `::0.0.0.1` is `::1`, the IPv6 loopback: not an IPv4-compatible address.
        fc.pre(!(prefix === '::' && value === 1n));
        expect(decide(policy, `${prefix}${quad(octets)}`)).toEqual(expected);
        expect(decide(policy, `${prefix}${hex(octets)}`)).toEqual(expected);
      }),
      { numRuns: propertyRuns(2_000) },
    );
  });

  it('the never-list wins over any allow range that is not exact', () => {
    const never = fc.constantFrom(...NEVER_RANGES);
    fc.assert(
      fc.property(
        never,
        fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
        fc.nat(),
        (range, n, p) => {
          const bits = range.family === 4 ? 32 : 128;
          const host = n & ((1n << BigInt(bits - range.prefix)) - 1n);
          const address = { family: range.family, value: range.base | host };
          // An allow range strictly wider than the never-list range holding the address.
          const prefix = range.prefix === 0 ? 0 : p % range.prefix;
          const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - prefix)) - 1n);
          const wide = `${formatIpAddress({ family: range.family, value: range.base & mask })}/${prefix}`;
          const decision = decideEgress(policyOf(wide), null, address);
          expect(decision).toEqual({ allowed: false, rule: 'never' });
        },
      ),
      { numRuns: propertyRuns(2_000) },
    );
  });

  it('reads hex and dotted forms alike', () => {
    for (const text of ['::ffff:a9fe:a9fe', '::ffff:169.254.169.254', '[::ffff:a9fe:a9fe]']) {
      expect(decide(EMPTY_EGRESS_POLICY, text)).toEqual({ allowed: false, rule: 'never' });
    }
    expect(decide(EMPTY_EGRESS_POLICY, '0:0:0:0:0:ffff:7f00:1').allowed).toBe(true);
  });
});

describe('parsing the lists', () => {
  it('accepts ranges, addresses and name patterns, blanks ignored', () => {
    const { list, problems } = parseEgressList(
      ' 10.0.0.0/8, ::1 ,fc00::/7,, mcp.example.com , *.internal.example ',
    );
    expect(problems).toEqual([]);
    expect(list.ranges).toHaveLength(3);
    expect(list.names).toEqual([
      { name: 'mcp.example.com', wildcard: false },
      { name: '.internal.example', wildcard: true },
    ]);
  });

  it.each([
    ['10.0.0.1/8', 'host bits are set (the network is 10.0.0.0/8)'],
    ['10.0.0.0/33', 'the prefix length must be 0 to 32'],
    ['fc00::/129', 'the prefix length must be 0 to 128'],
    ['http://evil.example', 'expected a CIDR range'],
    ['evil.example:8080', 'expected a CIDR range'],
    ['*.', 'expected a CIDR range'],
    ['a.*.example', 'expected a CIDR range'],
    ['1.2.3', 'expected a CIDR range'],
    ['010.0.0.1', 'expected a CIDR range'],
    ['-bad.example', 'expected a CIDR range'],
  ])('refuses %s', (entry, problem) => {
    const { problems } = parseEgressList(`127.0.0.1,${entry}`);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.entry).toBe(entry);
    expect(problems[0]!.problem).toContain(problem);
  });

  it('round-trips every IPv6 address through its text form', () => {
    fc.assert(
      fc.property(fc.ipV6(), (text) => {
        const parsed = parseIpAddress(text);
        expect(parsed).not.toBeNull();
        const again = parseIpAddress(formatIpAddress(parsed!));
        expect(again?.value).toBe(parsed!.value);
      }),
      { numRuns: propertyRuns(2_000) },
    );
  });

  it('never throws on arbitrary entries', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        parseEgressList(text);
        parseIpRange(text);
      }),
    );
  });
});

describe('checkEgress', () => {
  const table: Record<string, string[]> = {
    'public.example': ['93.184.216.34', '2606:2800:220:1::1'],
    'rebound.example': ['93.184.216.34', '169.254.169.254'],
    'mapped.example': ['::ffff:169.254.169.254'],
  };
  const lookups: string[] = [];
  const egress = (policy: EgressPolicy = EMPTY_EGRESS_POLICY) => ({
    policy,
    resolve: async (host: string) => {
      lookups.push(host);
      const addresses = table[host];
      if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
  });

  it('decides a literal without resolving it', async () => {
    lookups.length = 0;
    const check = await checkEgress(egress(), '169.254.169.254');
    expect(check).toMatchObject({ allowed: false, refusal: { rule: 'never' } });
    expect(lookups).toEqual([]);
  });

  it('refuses a name when any of its addresses is forbidden', async () => {
    expect(await checkEgress(egress(), 'public.example')).toMatchObject({ allowed: true });
    expect(await checkEgress(egress(), 'rebound.example')).toMatchObject({
      allowed: false,
      refusal: { host: 'rebound.example', address: '169.254.169.254', rule: 'never' },
    });
    expect(await checkEgress(egress(), 'mapped.example')).toMatchObject({
      allowed: false,
      refusal: { address: '169.254.169.254' },
    });
  });

  it('refuses a denied name before resolving it', async () => {
    lookups.length = 0;
    const check = await checkEgress(egress(policyOf('', '*.example')), 'public.example');
    expect(check).toMatchObject({ allowed: false, refusal: { address: null, rule: 'deny_list' } });
    expect(lookups).toEqual([]);
  });

  it('lets a resolver failure through as it came', async () => {
    await expect(checkEgress(egress(), 'missing.example')).rejects.toMatchObject({
      code: 'ENOTFOUND',
    });
  });
});
