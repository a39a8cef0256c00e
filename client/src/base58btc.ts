// base58btc (the Bitcoin alphabet): the one codec behind `z…` multibase keys, exact and without
// leniency: no whitespace, no other alphabet; each leading zero byte is one leading `1`. The
// quadratic base conversion is fine for what it carries (did:key public keys, 34 bytes).
//
// The client package stands alone, so client/src/base58btc.ts is a byte-for-byte copy of this
// file (tests/shared/encoding/base58btc.test.ts fails while they differ): change both at once.

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const DIGIT = new Map([...ALPHABET].map((char, index) => [char, index]));

export function encodeBase58btc(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // Little-endian base-58 digits.
  const digits: number[] = [];
  for (let index = zeros; index < bytes.length; index++) {
    let carry = bytes[index] as number;
    for (let at = 0; at < digits.length; at++) {
      carry += (digits[at] as number) << 8;
      digits[at] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    for (; carry > 0; carry = Math.floor(carry / 58)) digits.push(carry % 58);
  }
  let text = '1'.repeat(zeros);
  for (let at = digits.length - 1; at >= 0; at--) text += ALPHABET[digits[at] as number];
  return text;
}

/** The bytes `text` spells; undefined when a character is not in the alphabet. */
export function decodeBase58btc(text: string): Uint8Array | undefined {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  // Little-endian base-256 digits of the number the base58 digits after the zeros spell.
  const bytes: number[] = [];
  for (let index = zeros; index < text.length; index++) {
    let carry = DIGIT.get(text[index] as string);
    if (carry === undefined) return undefined;
    for (let at = 0; at < bytes.length; at++) {
      carry += (bytes[at] as number) * 58;
      bytes[at] = carry & 0xff;
      carry >>= 8;
    }
    for (; carry > 0; carry >>= 8) bytes.push(carry & 0xff);
  }
  const out = new Uint8Array(zeros + bytes.length);
  for (let at = 0; at < bytes.length; at++) out[out.length - 1 - at] = bytes[at] as number;
  return out;
}
