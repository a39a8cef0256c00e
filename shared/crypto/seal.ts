// Secrets at rest (tenant CA key seeds) sealed under the gateway's master key: AES-256-GCM with a
// fresh random 96-bit IV per seal and caller-given additional authenticated data, written
// `v1.<iv>.<ciphertext||tag>` in base64url. The AAD binds a sealed value to where it belongs
// (`<tenantId>/<kid>` for CA keys), so a sealed value copied to another row does not open.
//
// The master key is 32 bytes written as 64 hex digits or 43 base64url characters. parseMasterKey
// remembers where a key came from, so a failed unseal names the source without every caller
// passing it again (callers that copy the key, or want another wording, pass names to unseal).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { gatewayError } from '../errors/index.js';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';
const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64URL_KEY = /^[A-Za-z0-9_-]{43}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Where each parsed master key came from, for the messages of a failed unseal. */
const sources = new WeakMap<Uint8Array, string>();

/**
 * The 32-byte master key written in `text` (surrounding whitespace, such as a key file's final
 * newline, is ignored). Throws MASTER_KEY_INVALID naming `source` (the environment variable or
 * file it was read from) for anything else.
 */
export function parseMasterKey(text: string, source: string): Buffer {
  const written = text.trim();
  let key: Buffer;
  if (HEX_KEY.test(written)) {
    key = Buffer.from(written, 'hex');
  } else if (BASE64URL_KEY.test(written)) {
    key = Buffer.from(written, 'base64url');
    // 43 characters carry 258 bits: the last two must be zero, or two texts name one key.
    if (key.toString('base64url') !== written) {
      throw gatewayError('MASTER_KEY_INVALID', {
        source,
        problem: 'the base64url text is not in canonical form (its last character is off)',
      });
    }
  } else {
    throw gatewayError('MASTER_KEY_INVALID', {
      source,
      problem: `expected 64 hex digits or 43 base64url characters, found ${describe(written)}`,
    });
  }
  sources.set(key, source);
  return key;
}

function describe(written: string): string {
  if (written.length === 0) return 'nothing';
  if (/[+/=]/.test(written)) return `${written.length} characters of base64 (use base64url)`;
  return `${written.length} characters`;
}

/** `plaintext` sealed under `masterKey`, bound to `aad`: `v1.<iv>.<ciphertext||tag>`. */
export function seal(masterKey: Uint8Array, plaintext: Uint8Array, aad: string): string {
  requireKeyLength(masterKey);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
}

/** How a failed unseal names things; by default the key's parse source and the AAD. */
export interface UnsealNames {
  /** Where the master key came from (AGENT_GATEWAY_MASTER_KEY, a key file path). */
  readonly source?: string;
  /** The sealed value's name in messages. */
  readonly keyId?: string;
}

/**
 * The plaintext of a `seal` result. Throws MASTER_KEY_MISMATCH when authentication fails (another
 * master key, another AAD, or a changed value: GCM cannot tell them apart) and
 * SIGNING_KEY_UNAVAILABLE when `sealed` is not in the v1 format at all.
 */
export function unseal(
  masterKey: Uint8Array,
  sealed: string,
  aad: string,
  names: UnsealNames = {},
): Uint8Array {
  requireKeyLength(masterKey);
  const keyId = names.keyId ?? aad;
  const parts = sealed.split('.');
  const iv = parts[1] !== undefined && BASE64URL.test(parts[1]) ? decode(parts[1]) : undefined;
  const body = parts[2] !== undefined && BASE64URL.test(parts[2]) ? decode(parts[2]) : undefined;
  if (
    parts.length !== 3 ||
    parts[0] !== VERSION ||
    iv?.length !== IV_BYTES ||
    body === undefined ||
    body.length < TAG_BYTES
  ) {
    throw gatewayError('SIGNING_KEY_UNAVAILABLE', {
      reason: `sealed key ${keyId} is not in the ${VERSION}.<iv>.<ciphertext||tag> format`,
    });
  }
  const decipher = createDecipheriv('aes-256-gcm', masterKey, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  try {
    const plaintext = Buffer.concat([
      decipher.update(body.subarray(0, body.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return new Uint8Array(plaintext.buffer, plaintext.byteOffset, plaintext.length);
  } catch (error) {
    const source = names.source ?? sources.get(masterKey) ?? 'the caller';
    throw gatewayError('MASTER_KEY_MISMATCH', { source, keyId }, { cause: error });
  }
}

function decode(text: string): Buffer {
  return Buffer.from(text, 'base64url');
}

function requireKeyLength(masterKey: Uint8Array): void {
  if (masterKey.length !== KEY_BYTES) {
    throw new RangeError(`a master key has ${KEY_BYTES} bytes, not ${masterKey.length}`);
  }
}
