// Ed25519 public keys in the form agents register them: multibase base58btc (`z…`) of the
// multicodec prefix ed25519-pub (0xed 0x01, varint) followed by the 32 key bytes, which always
// reads `z6Mk…` and is the method-specific id of a `did:key` (W3C did:key spec, §3.1.2).
//
// Why a codec of our own (shared/encoding/base58btc.ts): no base58 library is a dependency of
// the gateway, and the one thing needed here is base58btc (Bitcoin alphabet) of 34 bytes, exact
// and without leniency: no whitespace, no other multibase prefix, no leading-zero tricks. A key
// is always 48 characters (34 bytes starting 0xed are always 47 base58 digits), so the quadratic
// base conversion never sees more than that.
import { decodeBase58btc, encodeBase58btc } from '../encoding/base58btc.js';

/** Multicodec ed25519-pub as an unsigned varint. */
const ED25519_PUB = [0xed, 0x01] as const;
const KEY_BYTES = 32;
/** `z` + the 47 base58 digits of 0xed 0x01 and 32 bytes. */
const ENCODED_LENGTH = 48;

/** The 32 bytes of a `z6Mk…` Ed25519 public key; undefined for anything else. */
export function decodeEd25519PublicKey(multibase: string): Uint8Array | undefined {
  if (multibase.length !== ENCODED_LENGTH || multibase[0] !== 'z') return undefined;
  const bytes = decodeBase58btc(multibase.slice(1));
  if (
    bytes === undefined ||
    bytes.length !== ED25519_PUB.length + KEY_BYTES ||
    bytes[0] !== ED25519_PUB[0] ||
    bytes[1] !== ED25519_PUB[1]
  ) {
    return undefined;
  }
  return bytes.subarray(ED25519_PUB.length);
}

/** True when `multibase` is a `z6Mk…` Ed25519 public key. */
export function isEd25519PublicKey(multibase: string): boolean {
  return decodeEd25519PublicKey(multibase) !== undefined;
}

/** The `z6Mk…` form of 32 raw Ed25519 public key bytes. */
export function encodeEd25519PublicKey(key: Uint8Array): string {
  if (key.length !== KEY_BYTES) {
    throw new RangeError(`an Ed25519 public key has ${KEY_BYTES} bytes, not ${key.length}`);
  }
  const bytes = new Uint8Array(ED25519_PUB.length + KEY_BYTES);
  bytes.set(ED25519_PUB);
  bytes.set(key, ED25519_PUB.length);
  return `z${encodeBase58btc(bytes)}`;
}
