// base58btc (shared/encoding/base58btc.ts): the Bitcoin Core test vectors
// (src/test/data/base58_encode_decode.json) and the base58 draft's examples
// (draft-msporny-base58), a round trip over random bytes, a BigInt oracle, and the client
// package's copy being this very file.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as clientCodec from '../../../client/src/base58btc.js';
import { decodeBase58btc, encodeBase58btc } from '../../../shared/encoding/base58btc.js';
import { propertyRuns } from '../../support/property-runs.js';

const VECTORS: readonly (readonly [hex: string, text: string])[] = [
  ['', ''],
  ['61', '2g'],
  ['626262', 'a3gV'],
  ['636363', 'aPEr'],
  ['73696d706c792061206c6f6e6720737472696e67', '2cFupjhnEsSn59qHXstmK2ffpLv2'],
  ['00eb15231dfceb60925886b67d065299925915aeb172c06647', '1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L'],
  ['516b6fcd0f', 'ABnLTmg'],
  ['bf4f89001e670274dd', '3SEo3LWLoPntC'],
  ['572e4794', '3EFU7m'],
  ['ecac89cad93923c02321', 'EJDM8drfXA6uyA'],
  ['10c8511e', 'Rt5zm'],
  ['00000000000000000000', '1111111111'],
  [Buffer.from('Hello World!').toString('hex'), '2NEpo7TZRRrLZSi2U'],
  ['0000287fb4cd', '11233QC4'],
];

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** An independent encoder: the bytes as one BigInt, leading zero bytes as `1`s. */
function bigIntEncode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let value = BigInt(`0x0${Buffer.from(bytes).toString('hex')}`);
  let text = '';
  for (; value > 0n; value /= 58n) text = ALPHABET[Number(value % 58n)] + text;
  return '1'.repeat(zeros) + text;
}

describe('base58btc', () => {
  it.each(VECTORS)('0x%s is %s', (hex, text) => {
    expect(encodeBase58btc(Buffer.from(hex, 'hex'))).toBe(text);
    expect(Buffer.from(decodeBase58btc(text) ?? [1])).toEqual(Buffer.from(hex, 'hex'));
  });

  it('round-trips any bytes, leading zeros included, as the BigInt oracle encodes them', () => {
    const bytes = fc
      .tuple(fc.nat({ max: 4 }), fc.uint8Array({ maxLength: 48 }))
      .map(([zeros, rest]) => Uint8Array.from([...new Array<number>(zeros).fill(0), ...rest]));
    fc.assert(
      fc.property(bytes, (input) => {
        const text = encodeBase58btc(input);
        expect(text).toBe(bigIntEncode(input));
        expect(decodeBase58btc(text)).toEqual(input);
      }),
      { numRuns: propertyRuns(2000) },
    );
  });

  it('decodes any text of its alphabet to bytes that encode back to it', () => {
    const text = fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 60 });
    fc.assert(
      fc.property(text, (input) => {
        expect(encodeBase58btc(decodeBase58btc(input) as Uint8Array)).toBe(input);
      }),
    );
  });

  it.each([['0'], ['O'], ['I'], ['l'], ['2g '], [' 2g'], ['2+g']])(
    'refuses %j (a character outside the alphabet)',
    (text) => {
      expect(decodeBase58btc(text)).toBeUndefined();
    },
  );

  it('the client package carries this file byte for byte', () => {
    const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
    expect(read('../../../client/src/base58btc.ts')).toBe(
      read('../../../shared/encoding/base58btc.ts'),
    );
    expect(clientCodec.encodeBase58btc(Uint8Array.of(0, 0x61))).toBe('12g');
  });
});
