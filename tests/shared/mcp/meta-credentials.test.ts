// The `_meta` credential scan (shared/mcp/meta-credentials.ts): which names and values are
// credentials, which never are by name, where a finding is reported, and that the scan is bounded
// and fails closed. Pure: no gateway, milliseconds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  findMetaCredential,
  isCredentialName,
  isCredentialValue,
  META_SCAN_LIMITS,
} from '../../../shared/mcp/meta-credentials.js';
import { propertyRuns } from '../../support/property-runs.js';

const ROOT = 'request.params._meta';
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
const API_KEY = `agk_abcdefghij12_${'A'.repeat(43)}`;

function nest(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

describe('credential names', () => {
  it.each([
    'authorization',
    'Authorization',
    'AUTH',
    'cookie',
    'Set-Cookie',
    'set_cookie',
    'token',
    'access_token',
    'accessToken',
    'id-token',
    'refresh_token',
    'api_key',
    'apiKey',
    'X-API-Key',
    'x_api_key',
    'secret',
    'client_secret',
    'password',
    'credentials',
    'proxy-authorization',
    'bearer_token',
    'com.example/authorization',
    'a_u-t_h',
  ])('%s is a credential name', (name) => {
    expect(isCredentialName(name)).toBe(true);
  });

  it.each([
    'progressToken',
    'io.modelcontextprotocol/related-task',
    'io.modelcontextprotocol/token',
    'io.modelcontextprotocol/authorization',
    'tokens',
    'authority',
    'traceparent',
    'com.example/trace',
    'a',
  ])('%s is not a credential name', (name) => {
    expect(isCredentialName(name)).toBe(false);
  });
});

describe('credential values', () => {
  it.each([
    'Bearer abc',
    'bearer abc',
    '  BEARER\tabc',
    'Basic dXNlcjpwYXNz',
    'basic x',
    JWT,
    `token=${JWT}`,
    'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
    API_KEY,
    `key ${API_KEY} here`,
  ])('%s is credential-shaped', (value) => {
    expect(isCredentialValue(value)).toBe(true);
  });

  it.each([
    'Bearer',
    'bearer-less',
    'basically',
    'a Bearer token',
    'eyJhbGciOiJIUzI1NiJ9',
    'eyJ.a',
    `x${JWT}`,
    'agk_short_key',
    'progress-1',
    '',
  ])('%s is not credential-shaped', (value) => {
    expect(isCredentialValue(value)).toBe(false);
  });
});

describe('findMetaCredential', () => {
  it('finds nothing in the _meta MCP itself sends', () => {
    expect(findMetaCredential({ progressToken: 7 }, ROOT)).toBeNull();
    expect(findMetaCredential({ progressToken: 'p-1' }, ROOT)).toBeNull();
    expect(
      findMetaCredential(
        { 'io.modelcontextprotocol/related-task': { taskId: 't-1' }, 'com.example/trace': 'x' },
        ROOT,
      ),
    ).toBeNull();
    expect(findMetaCredential(undefined, ROOT)).toBeNull();
    expect(findMetaCredential(42, ROOT)).toBeNull();
  });

  it.each([
    [{ headers: { authorization: 'x' } }, `${ROOT}.headers.authorization`],
    [{ a: { b: { c: { Cookie: 'sid=1' } } } }, `${ROOT}.a.b.c.Cookie`],
    [{ list: ['ok', { nested: ['Bearer abc'] }] }, `${ROOT}.list[1].nested[0]`],
    [{ h: 'Basic dXNlcjpwYXNz' }, `${ROOT}.h`],
    [{ trace: JWT }, `${ROOT}.trace`],
    [{ key: API_KEY }, `${ROOT}.key`],
    [{ progressToken: JWT }, `${ROOT}.progressToken`],
    [
      { 'io.modelcontextprotocol/related-task': { taskId: API_KEY } },
      `${ROOT}["io.modelcontextprotocol/related-task"].taskId`,
    ],
    [{ 'com.example/api-key': 'k' }, `${ROOT}["com.example/api-key"]`],
    ['Bearer abc', ROOT],
    [['x', 'Bearer abc'], `${ROOT}[1]`],
  ])('finds %j at its path', (meta, path) => {
    expect(findMetaCredential(meta, ROOT)).toEqual({ kind: 'credential', path });
  });

  it('never repeats a key that is long, unprintable or itself a credential in the path', () => {
    const meta = { [JWT]: { ['x'.repeat(100)]: { 'a\u0000b': { token: 1 } } } };
    const finding = findMetaCredential(meta, ROOT);
    expect(finding).toEqual({ kind: 'credential', path: `${ROOT}[…][…][…].token` });
  });

  it('fails closed beyond the depth and size bounds', () => {
    const { maxDepth, maxNodes } = META_SCAN_LIMITS;
    // nest(d, object): d containers, `_meta` itself the first.
    expect(findMetaCredential(nest(maxDepth + 1, { ok: 1 }), ROOT)).toEqual({
      kind: 'too-large',
      path: ROOT,
    });
    expect(findMetaCredential(nest(maxDepth, { ok: 1 }), ROOT)).toBeNull();
    expect(findMetaCredential(nest(maxDepth + 1, { token: 1 }), ROOT)).toMatchObject({
      kind: 'too-large',
    });
    const wide = Object.fromEntries(Array.from({ length: maxNodes }, (_, i) => [`k${i}`, i]));
    expect(findMetaCredential(wide, ROOT)).toEqual({ kind: 'too-large', path: ROOT });
    expect(findMetaCredential(Array(maxNodes).fill(0), ROOT)).toEqual({
      kind: 'too-large',
      path: ROOT,
    });
    expect(findMetaCredential(Array(maxNodes - 1).fill(0), ROOT)).toBeNull();
  });

  it('walks a structure 100 000 levels deep without recursion', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findMetaCredential(deep, ROOT)).toEqual({ kind: 'too-large', path: ROOT });
  });

  it('is linear on adversarial strings', () => {
    const meta = { a: 'eyJ'.repeat(300_000), b: 'eyJaa..'.repeat(200_000), c: ' '.repeat(1e6) };
    expect(findMetaCredential(meta, ROOT)).toBeNull();
  });
});

describe('findMetaCredential properties', () => {
  const plainKey = fc
    .stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,11}$/)
    .filter((key) => !isCredentialName(key));
  const plainValue = fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 20 }).filter((value) => !isCredentialValue(value)),
  );
  const credentialValue = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,40}$/).map((token) => `Bearer ${token}`),
    fc.stringMatching(/^[A-Za-z0-9+/]{4,40}$/).map((token) => `basic ${token}`),
    fc
      .tuple(
        fc.stringMatching(/^[A-Za-z0-9_-]{2,30}$/),
        fc.stringMatching(/^[A-Za-z0-9_-]{2,30}$/),
        fc.stringMatching(/^[A-Za-z0-9_-]{0,30}$/),
      )
      .map(([header, payload, signature]) => `eyJ${header}.${payload}.${signature}`),
    fc
      .tuple(fc.stringMatching(/^[a-z0-9]{12}$/), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/))
      .map(([prefix, secret]) => `agk_${prefix}_${secret}`),
  );
  // A step down: a key of an object (with plain siblings) or an index of an array.
  const step = fc.oneof(
    fc.record({ key: plainKey, siblings: fc.dictionary(plainKey, plainValue, { maxKeys: 3 }) }),
    fc.record({ index: fc.nat(3), fill: plainValue }),
  );

  it('finds a credential-shaped value placed at any path up to the depth bound', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: META_SCAN_LIMITS.maxDepth }),
        credentialValue,
        (steps, secret) => {
          let value: unknown = secret;
          for (let i = steps.length - 1; i >= 0; i--) {
            const at = steps[i]!;
            if ('key' in at) {
              value = { ...at.siblings, [at.key]: value };
            } else {
              const array: unknown[] = Array(at.index).fill(at.fill);
              array.push(value);
              value = array;
            }
          }
          expect(findMetaCredential(value, ROOT)).toMatchObject({ kind: 'credential' });
        },
      ),
      { numRuns: propertyRuns(1000) },
    );
  });

  it('never flags a plain progressToken or related-task', () => {
    const plainToken = fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.string({ maxLength: 64 }).filter((value) => !isCredentialValue(value)),
    );
    fc.assert(
      fc.property(plainToken, plainToken, (progressToken, taskId) => {
        const meta = { progressToken, 'io.modelcontextprotocol/related-task': { taskId } };
        expect(findMetaCredential(meta, ROOT)).toBeNull();
      }),
      { numRuns: propertyRuns(1000) },
    );
  });
});
