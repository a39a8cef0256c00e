// Agent public keys are Ed25519 keys in the did:key form, `z6Mk…`: multibase base58btc of the
// ed25519-pub multicodec (0xed 0x01) and 32 key bytes. Checked against published did:key test
// vectors (the key's did:key id beside its raw bytes in base58, Ed25519VerificationKey2018).
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decodeEd25519PublicKey,
  encodeEd25519PublicKey,
  isEd25519PublicKey,
} from '../../../shared/identity/ed25519-multibase.js';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** An independent base58 decoder (BigInt) for raw 32-byte keys, to check against. */
function base58ToBytes(text: string, length: number): Buffer {
  let value = 0n;
  for (const char of text) value = value * 58n + BigInt(BASE58.indexOf(char));
  return Buffer.from(value.toString(16).padStart(length * 2, '0'), 'hex');
}

const VECTORS = [
  [
    'z6Mkgg342Ycpuk263R9d8Aq6MUaxPn1DDeHyGo38EefXmgDL',
    '3Dn1SJNPaCXcvvJvSbsFWP2xaCjMom3can8CQNhWrTRx',
  ],
  [
    'z6MkmjY8GnV5i9YTDtPETC2uUAW6ejw3nk5mXF5yci5ab7th',
    '8HH5gYEeNc3z7PYXmd54d4x6qAfCNrqQqEB3nS7Zfu7K',
  ],
] as const;

describe('Ed25519 public keys in the z6Mk… form', () => {
  it.each(VECTORS)('decodes the did:key test vector %s to its raw key', (multibase, raw) => {
    const key = decodeEd25519PublicKey(multibase);
    expect(Buffer.from(key ?? [])).toEqual(base58ToBytes(raw, 32));
    expect(encodeEd25519PublicKey(base58ToBytes(raw, 32))).toBe(multibase);
  });

  it('accepts the W3C did:key example and keys made by node:crypto', () => {
    expect(isEd25519PublicKey('z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK')).toBe(true);
    const { x } = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
    const raw = Buffer.from(x as string, 'base64url');
    const multibase = encodeEd25519PublicKey(raw);
    expect(multibase).toMatch(/^z6Mk/);
    expect(Buffer.from(decodeEd25519PublicKey(multibase) ?? [])).toEqual(raw);
  });

  it.each([
    ['not a key at all', 'notakey'],
    ['empty', ''],
    ['one character short', 'z6Mkgg342Ycpuk263R9d8Aq6MUaxPn1DDeHyGo38EefXmgD'],
    ['one character long', 'z6Mkgg342Ycpuk263R9d8Aq6MUaxPn1DDeHyGo38EefXmgDLL'],
    ['base58btc without the multibase z', '6Mkgg342Ycpuk263R9d8Aq6MUaxPn1DDeHyGo38EefXmgDL'],
    ['another multibase (base64url u)', 'u6Mkgg342Ycpuk263R9d8Aq6MUaxPn1DDeHyGo38EefXmgDL'],
    ['a character outside base58 (0)', 'z6Mkgg342Ycpuk263R9d8Aq6MUaxPn1DDeHyGo38EefXmg0L'],
    ['an X25519 key (z6LS…)', 'z6LShpNhGwSupbB7zjuivH156vhLJBDDzmQtA4BY9S94pe1K'],
    ['a secp256k1 key (zQ3s…)', 'zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme'],
    ['the right length, but more than 34 bytes', `z${'z'.repeat(47)}`],
  ])('refuses %s', (_name, text) => {
    expect(isEd25519PublicKey(text)).toBe(false);
  });

  it('refuses raw keys that are not 32 bytes', () => {
    expect(() => encodeEd25519PublicKey(new Uint8Array(31))).toThrow(RangeError);
  });
});
