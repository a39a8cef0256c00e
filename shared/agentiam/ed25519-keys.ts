// Ed25519 key material as the gateway keeps it: the 32-byte seed (RFC 8032 private key, the part
// that is sealed at rest) and the `z6Mk…` public key derived from it. Node's crypto derives the
// public key synchronously, without configuring a hash for @noble/ed25519.
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { gatewayError } from '../errors/index.js';
import { encodeEd25519PublicKey } from '../identity/ed25519-multibase.js';

export interface Ed25519KeyMaterial {
  /** `z6Mk…`: multibase base58btc of multicodec ed25519-pub + the 32 public key bytes. */
  readonly publicKeyMultibase: string;
  /** The 32-byte seed. */
  readonly secretKey: Uint8Array;
}

const SEED_BYTES = 32;
/** PKCS#8 DER of an Ed25519 private key, up to the 32 seed bytes (RFC 8410). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function generateEd25519KeyMaterial(): Ed25519KeyMaterial {
  return keyMaterialFromSeed(randomBytes(SEED_BYTES));
}

/** An OKP private JWK (RFC 8037): `x` the public key, `d` the seed, both base64url. */
export interface Ed25519PrivateJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly d: string;
}

/** The key pair as an RFC 8037 private JWK, the form `agentiam keygen` writes and jose imports. */
export function toPrivateJwk(material: Ed25519KeyMaterial): Ed25519PrivateJwk {
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, material.secretKey]),
    format: 'der',
    type: 'pkcs8',
  });
  const jwk = privateKey.export({ format: 'jwk' });
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string, d: jwk.d as string };
}

export function keyMaterialFromSeed(seed: Uint8Array): Ed25519KeyMaterial {
  if (seed.length !== SEED_BYTES) {
    throw gatewayError('SIGNING_KEY_UNAVAILABLE', {
      reason: `an Ed25519 seed has ${SEED_BYTES} bytes, not ${seed.length}`,
    });
  }
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const publicKey = Buffer.from(jwk.x as string, 'base64url');
  return {
    publicKeyMultibase: encodeEd25519PublicKey(publicKey),
    secretKey: Uint8Array.from(seed),
  };
}
