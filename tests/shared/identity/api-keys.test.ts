import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  generateApiKey,
  hashApiKeySecret,
  parseApiKey,
  verifyApiKeySecret,
} from '../../../shared/identity/api-keys.js';

describe('API keys', () => {
  it('round-trips: a generated key parses to its prefix and verifies against its hash', () => {
    const generated = generateApiKey();
    const parsed = parseApiKey(generated.key);
    expect(parsed?.prefix).toBe(generated.prefix);
    expect(verifyApiKeySecret(parsed?.secret as string, generated.secretHash)).toBe(true);
  });

  it('never verifies another secret', () => {
    const a = generateApiKey();
    const b = parseApiKey(generateApiKey().key);
    expect(verifyApiKeySecret(b?.secret as string, a.secretHash)).toBe(false);
    expect(verifyApiKeySecret('x', a.secretHash)).toBe(false);
    expect(verifyApiKeySecret(b?.secret as string, 'not-hex')).toBe(false);
  });

  it('generates distinct keys with uniformly formed prefixes', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey().key));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(key).toMatch(/^agk_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
  });

  it('stores SHA-256 of the secret, not the secret', () => {
    const generated = generateApiKey();
    const secret = parseApiKey(generated.key)?.secret as string;
    expect(generated.secretHash).toBe(hashApiKeySecret(secret));
    expect(generated.secretHash).not.toContain(secret);
  });

  it('rejects anything that is not a key without throwing', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const parsed = parseApiKey(value);
        expect(parsed === undefined || typeof parsed.prefix === 'string').toBe(true);
      }),
    );
    expect(parseApiKey(`${generateApiKey().key}x`)).toBeUndefined();
    expect(parseApiKey(`Bearer ${generateApiKey().key}`)).toBeUndefined();
  });
});
