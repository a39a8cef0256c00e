// Which redirect URIs registration accepts (shared/oauth/client-metadata.ts), without a database:
// only a URI in its WHATWG canonical form (or missing only the root path), without userinfo or a
// backslash, so that no two URL parsers read a registered URI with different hosts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redirectUriProblem } from '../../../shared/oauth/client-metadata.js';
import { propertyRuns } from '../../support/property-runs.js';

describe('redirectUriProblem', () => {
  it.each([
    'https://app.example/cb',
    'https://app.example',
    'https://app.example/cb?x=1&y=%20',
    'http://127.0.0.1:8765/callback',
    'http://[::1]/cb',
    'http://localhost/cb',
  ])('accepts %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  it.each([
    ['http://127.0.0.1\\@evil.example/', 'backslash'],
    ['https://user@app.example/cb', 'userinfo'],
    ['https://:pw@app.example/cb', 'userinfo'],
    ['http://0x7f000001/cb', 'canonical'],
    ['http://127.1/cb', 'canonical'],
    ['https://APP.example/cb', 'canonical'],
    ['https://app.example/./cb', 'canonical'],
    ['https://xn--nxasmq6b.example/cb\u0000', 'canonical'],
  ])('refuses %s (%s)', (uri, problem) => {
    expect(redirectUriProblem(uri)).toContain(problem);
  });

  it('never accepts a URI whose WHATWG host differs from the host written in it', () => {
    const piece = fc.constantFrom(
      '\\',
      '@',
      ':',
      '/',
      '.',
      '%2e',
      '0x7f',
      '127',
      '1',
      'a',
      '[',
      ']',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const uri = `https://${parts.join('')}/cb`;
        if (redirectUriProblem(uri) !== undefined) return;
        const url = new URL(uri);
        expect(uri.startsWith(`https://${url.host}/`)).toBe(true);
        expect(url.username + url.password).toBe('');
      }),
      { numRuns: propertyRuns(2000), seed: 20261127 },
    );
  });
});
