// OAuth client ids and secrets. A client id is `agc_` + 22 base64url characters (128 random
// bits): public, it names the client's row. A secret is 43 base64url characters (256 random
// bits), shown to its owner once and stored only as its SHA-256 (hex), for the reason API keys
// are (shared/identity/api-keys.ts): a slow hash buys nothing for a uniformly random 256-bit
// secret. Presented secrets are compared by hash in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const CLIENT_ID_PATTERN = /^agc_[A-Za-z0-9_-]{22}$/;
const CLIENT_SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface GeneratedClientSecret {
  /** The secret, returned once in the registration answer. */
  readonly secret: string;
  readonly secretHash: string;
}

export function generateClientId(): string {
  return `agc_${randomBytes(16).toString('base64url')}`;
}

export function generateClientSecret(): GeneratedClientSecret {
  const secret = randomBytes(32).toString('base64url');
  return { secret, secretHash: hashClientSecret(secret) };
}

/** Whether a presented value has the form of our client ids (never throws). */
export function isClientId(value: unknown): value is string {
  return typeof value === 'string' && CLIENT_ID_PATTERN.test(value);
}

/** Whether a presented value has the form of our client secrets (never throws). */
export function isClientSecret(value: unknown): value is string {
  return typeof value === 'string' && CLIENT_SECRET_PATTERN.test(value);
}

export function hashClientSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time check of a presented secret against a stored hash. */
export function verifyClientSecret(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashClientSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
