// Sealed secrets are standard AES-256-GCM (checked against the GCM specification's test case 15)
// in the `v1.<iv>.<ciphertext||tag>` form, open only with the master key and the AAD they were
// sealed with, and never open changed. Master keys are 32 bytes as hex or base64url, nothing else.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMasterKey, seal, unseal } from '../../../shared/crypto/seal.js';
import { GatewayError } from '../../../shared/errors/index.js';

const HEX = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const KEY = parseMasterKey(HEX, 'AGENT_GATEWAY_MASTER_KEY');
const OTHER_KEY = parseMasterKey('ff'.repeat(32), '/data/master-key');
const AAD = '7d3c2f0e-1b5a-4c6d-8e9f-0a1b2c3d4e5f/kid-1';

function thrown(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

describe('parseMasterKey', () => {
  it('reads 64 hex digits in either case, and 43 base64url characters', () => {
    const bytes = Buffer.from(HEX, 'hex');
    expect(KEY).toEqual(bytes);
    expect(parseMasterKey(HEX.toUpperCase(), 'env')).toEqual(bytes);
    expect(parseMasterKey(bytes.toString('base64url'), 'env')).toEqual(bytes);
  });

  it("ignores surrounding whitespace, such as a key file's final newline", () => {
    expect(parseMasterKey(`  ${HEX}\n`, 'file')).toEqual(Buffer.from(HEX, 'hex'));
  });

  it.each([
    ['nothing', '', 'found nothing'],
    ['63 hex digits', HEX.slice(1), 'found 63 characters'],
    ['65 hex digits', `${HEX}0`, 'found 65 characters'],
    ['hex with a non-hex digit', `${HEX.slice(1)}g`, 'expected 64 hex digits'],
    ['padded base64', `${Buffer.from(HEX, 'hex').toString('base64')}`, 'use base64url'],
    ['42 base64url characters', 'A'.repeat(42), 'found 42 characters'],
    ['a 16-byte key', Buffer.alloc(16).toString('base64url'), 'found 22 characters'],
    ['a 48-byte key', Buffer.alloc(48, 0xff).toString('base64url'), 'found 64 characters'],
    ['non-canonical base64url', `${'A'.repeat(42)}B`, 'not in canonical form'],
  ])('refuses %s, naming the source', (_name, text, problem) => {
    const error = thrown(() => parseMasterKey(text, 'AGENT_GATEWAY_MASTER_KEY'));
    expect(error.code).toBe('MASTER_KEY_INVALID');
    expect(error.message).toMatch(/^AGENT_GATEWAY_MASTER_KEY is not a 32-byte key: /);
    expect(error.message).toContain(problem);
  });
});

describe('seal and unseal', () => {
  it('are AES-256-GCM: the GCM specification test case 15 opens', () => {
    const key = parseMasterKey(
      'feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308',
      'test vector',
    );
    const iv = Buffer.from('cafebabefacedbaddecaf888', 'hex');
    const ciphertext = Buffer.from(
      '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa' +
        '8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad' +
        'b094dac5d93471bdec1a502270e3cc6c',
      'hex',
    );
    const sealed = `v1.${iv.toString('base64url')}.${ciphertext.toString('base64url')}`;
    expect(Buffer.from(unseal(key, sealed, '')).toString('hex')).toBe(
      'd9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72' +
        '1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255',
    );
  });

  it('write v1.<12-byte iv>.<ciphertext and 16-byte tag>, with a fresh iv every time', () => {
    const seed = new Uint8Array(32).fill(7);
    const first = seal(KEY, seed, AAD);
    const [version, iv, body] = first.split('.');
    expect(version).toBe('v1');
    expect(Buffer.from(iv as string, 'base64url')).toHaveLength(12);
    expect(Buffer.from(body as string, 'base64url')).toHaveLength(32 + 16);
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(seal(KEY, seed, AAD)).not.toBe(first);
  });

  it('round-trip any plaintext under any AAD', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), fc.string(), (plaintext, aad) => {
        expect(unseal(KEY, seal(KEY, plaintext, aad), aad)).toEqual(plaintext);
      }),
    );
  });

  it('refuse another master key, naming the source it was parsed from and the AAD', () => {
    const error = thrown(() => unseal(OTHER_KEY, seal(KEY, new Uint8Array(32), AAD), AAD));
    expect(error.code).toBe('MASTER_KEY_MISMATCH');
    expect(error.message).toBe(
      `the master key from /data/master-key cannot open the sealed signing key ${AAD}`,
    );
  });

  it('name what the caller names', () => {
    const sealed = seal(KEY, new Uint8Array(32), AAD);
    const error = thrown(() =>
      unseal(Buffer.from(OTHER_KEY), sealed, AAD, { source: 'the key file', keyId: 'kid-1' }),
    );
    expect(error.message).toBe(
      'the master key from the key file cannot open the sealed signing key kid-1',
    );
  });

  it('refuse another AAD: a sealed key copied to another row does not open', () => {
    const sealed = seal(KEY, new Uint8Array(32), AAD);
    expect(thrown(() => unseal(KEY, sealed, `${AAD}x`)).code).toBe('MASTER_KEY_MISMATCH');
  });

  it('never open a changed value', () => {
    const plaintext = new Uint8Array(32).fill(42);
    const sealed = seal(KEY, plaintext, AAD);
    const [, iv, body] = sealed.split('.') as [string, string, string];
    const bytes = Buffer.concat([Buffer.from(iv, 'base64url'), Buffer.from(body, 'base64url')]);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: bytes.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        (at, flip) => {
          const changed = Buffer.from(bytes);
          changed[at] = (changed[at] as number) ^ flip;
          const tampered = `v1.${changed.subarray(0, 12).toString('base64url')}.${changed.subarray(12).toString('base64url')}`;
          expect(thrown(() => unseal(KEY, tampered, AAD)).code).toBe('MASTER_KEY_MISMATCH');
        },
      ),
    );
  });

  it.each([
    ['another version', (sealed: string) => sealed.replace(/^v1/, 'v2')],
    ['a missing part', (sealed: string) => sealed.split('.').slice(0, 2).join('.')],
    ['an extra part', (sealed: string) => `${sealed}.AAAA`],
    ['an 8-byte iv', (sealed: string) => sealed.replace(/\.[^.]+\./, '.AAAAAAAAAAA.')],
    ['padding', (sealed: string) => `${sealed}=`],
    ['a body shorter than a tag', (sealed: string) => sealed.replace(/\.[^.]+$/, '.AAAA')],
    ['nothing at all', () => ''],
  ])('report a value with %s as not sealed, not as a key mismatch', (_name, change) => {
    const error = thrown(() => unseal(KEY, change(seal(KEY, new Uint8Array(32), AAD)), AAD));
    expect(error.code).toBe('SIGNING_KEY_UNAVAILABLE');
    expect(error.message).toContain('is not in the v1.<iv>.<ciphertext||tag> format');
  });

  it('take only 32-byte master keys', () => {
    expect(() => seal(new Uint8Array(16), new Uint8Array(1), AAD)).toThrow(RangeError);
    expect(() => unseal(new Uint8Array(16), 'v1.a.b', AAD)).toThrow(RangeError);
  });
});
