// The delegator's Ed25519 key: its private JWK (RFC 8037) checked and turned into the key pair
// Digital Bazaar's signer takes, named by its did:key verification method `did:key:z6Mk…#z6Mk…`;
// and the decoding of a `z6Mk…` public key, the same check as the gateway's
// (shared/identity/ed25519-multibase.ts) over the same base58btc codec.
import { Ed25519VerificationKey2020 } from '@digitalbazaar/ed25519-verification-key-2020';
import { decodeBase58btc } from '../base58btc.js';
import { DelegationError } from './errors.js';

/** An OKP Ed25519 private JWK (RFC 8037), as spawn answers in `private_key_jwk`. */
export interface Ed25519PrivateJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  /** The public key, base64url. */
  readonly x: string;
  /** The 32-byte seed, base64url. */
  readonly d: string;
}

/** Any JWK-shaped object (a `JsonWebKey`, spawn's answer); checked to be an Ed25519PrivateJwk. */
export interface PrivateJwkInput {
  readonly kty?: string;
  readonly crv?: string;
  readonly x?: string;
  readonly d?: string;
}

/**
 * The key pair Digital Bazaar's signer takes, described by the package itself: the untyped
 * libraries' types stay out of the package's declarations.
 */
export interface SigningKey {
  /** `did:key:z6Mk…#z6Mk…`. */
  readonly id: string | undefined;
  /** `did:key:z6Mk…`. */
  readonly controller: string | undefined;
  readonly publicKeyMultibase: string;
}

/**
 * The key pair of `jwk` (given as option `field`), named by its did:key verification method.
 * Throws DELEGATION_KEY_INVALID for anything but a private Ed25519 JWK whose `x` is the public
 * key of its `d`.
 */
export async function signingKey(jwk: PrivateJwkInput, field: string): Promise<SigningKey> {
  const seed = typeof jwk.d === 'string' ? base64UrlBytes(jwk.d) : null;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || seed === null) {
    throw new DelegationError(
      'DELEGATION_KEY_INVALID',
      `${field} must be a private Ed25519 JWK (kty OKP, crv Ed25519, x, d)`,
      { field },
    );
  }
  if (seed.length !== 32) {
    throw new DelegationError('DELEGATION_KEY_INVALID', `${field}: d is not 32 bytes`, { field });
  }
  const key = (await Ed25519VerificationKey2020.generate({ seed })).publicKeyMultibase;
  const x = base64UrlBytes(jwk.x);
  const derived = ed25519PublicKeyBytes(key);
  if (x === null || derived === null || !sameBytes(x, derived)) {
    throw new DelegationError('DELEGATION_KEY_INVALID', `${field}: x is not the public key of d`, {
      field,
    });
  }
  const did = `did:key:${key}`;
  return Ed25519VerificationKey2020.generate({ seed, id: `${did}#${key}`, controller: did });
}

/**
 * The 32 bytes of a `z6Mk…` key: multibase base58btc (`z`) of the multicodec ed25519-pub prefix
 * 0xed 0x01 and the key, always 48 characters; null for anything else (the gateway's check,
 * shared/identity/ed25519-multibase.ts, over the same base58btc codec).
 */
export function ed25519PublicKeyBytes(multibase: string): Uint8Array | null {
  if (multibase.length !== 48 || multibase[0] !== 'z') return null;
  const bytes = decodeBase58btc(multibase.slice(1));
  if (bytes?.length !== 34 || bytes[0] !== 0xed || bytes[1] !== 0x01) return null;
  return bytes.slice(2);
}

function base64UrlBytes(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}
