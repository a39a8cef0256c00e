// API keys: `agk_<prefix>_<secret>`. The prefix is a public identifier (it finds the key's row by
// index and may appear in logs); the secret is 256 random bits and is stored only as its SHA-256
// (a slow password hash buys nothing for a uniformly random 256-bit secret and would cost the
// hot path). Presented keys are compared by hash in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY_PATTERN = /^agk_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedApiKey {
  /** The full key, shown to its owner once. */
  readonly key: string;
  readonly prefix: string;
  readonly secretHash: string;
}

export interface ParsedApiKey {
  readonly prefix: string;
  readonly secret: string;
}

const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function generateApiKey(): GeneratedApiKey {
  const bytes = randomBytes(12);
  let prefix = '';
  // 36 does not divide 256: reject the top bytes to keep every character equally likely.
  for (let i = 0; prefix.length < 12; i++) {
    const byte = i < bytes.length ? (bytes[i] as number) : (randomBytes(1)[0] as number);
    if (byte < 252) prefix += PREFIX_ALPHABET[byte % 36];
  }
  const secret = randomBytes(32).toString('base64url');
  return { key: `agk_${prefix}_${secret}`, prefix, secretHash: hashApiKeySecret(secret) };
}

/** Splits a presented key; undefined when it is not of our format (never throws). */
export function parseApiKey(presented: unknown): ParsedApiKey | undefined {
  if (typeof presented !== 'string' || presented.length > 128) return undefined;
  const match = KEY_PATTERN.exec(presented);
  if (!match) return undefined;
  return { prefix: match[1] as string, secret: match[2] as string };
}

export function hashApiKeySecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * Compares two strings in time that depends only on their lengths (which the key format fixes),
 * never on where they first differ.
 */
export function equalInConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** Constant-time check of a presented secret against a stored hash. */
export function verifyApiKeySecret(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKeySecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
