// The warnings of a valid gateway policy change: one per trusted server id that no registered
// server has, at its index, naming the registered ids so that a typo shows beside them.
import { describe, expect, it } from 'vitest';
import { findUnregisteredTrustedServers } from '../../../shared/gateway-policy/gateway-policy-warnings.js';

describe('findUnregisteredTrustedServers', () => {
  it('warns once per unregistered id, at its index', () => {
    const warnings = findUnregisteredTrustedServers(['crm', 'cmr', 'files', 'x'], ['crm', 'files']);
    expect(warnings.map((w) => [w.code, w.field])).toEqual([
      ['TRUSTED_SERVER_NOT_REGISTERED', 'trustedServers[1]'],
      ['TRUSTED_SERVER_NOT_REGISTERED', 'trustedServers[3]'],
    ]);
    expect(warnings[0]?.message).toMatch(
      /^no MCP server "cmr" is registered .*registered: crm, files\)/,
    );
  });

  it('says when no server is registered, and caps the list it names', () => {
    expect(findUnregisteredTrustedServers(['a'], [])[0]?.message).toContain(
      '(none is registered yet)',
    );
    const many = Array.from({ length: 25 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    expect(findUnregisteredTrustedServers(['a'], many)[0]?.message).toContain('s19 and 5 more)');
  });

  it('is silent when every id is registered', () => {
    expect(findUnregisteredTrustedServers(['a', 'b'], ['b', 'a', 'c'])).toEqual([]);
    expect(findUnregisteredTrustedServers([], [])).toEqual([]);
  });
});
