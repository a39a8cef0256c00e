// Real agent keys for tests: a fresh Ed25519 key pair from node:crypto, its public half in the
// `z6Mk…` form agents register (shared/identity/ed25519-multibase.ts).
import { generateKeyPairSync } from 'node:crypto';
import { encodeEd25519PublicKey } from '../../shared/identity/ed25519-multibase.js';

/** The `z6Mk…` public key of a new Ed25519 key pair. */
export function newAgentPublicKey(): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const { x } = publicKey.export({ format: 'jwk' });
  return encodeEd25519PublicKey(Buffer.from(x as string, 'base64url'));
}
