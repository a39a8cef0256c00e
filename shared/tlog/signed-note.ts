// C2SP signed-note (https://c2sp.org/signed-note), Ed25519 keys only: the text, a blank line,
// then one `— <key name> <base64(key id ‖ signature)>` line per signature. A key's id is the
// first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key); a verifier key is written
// `<name>+<id as 8 hex digits>+<base64(0x01 ‖ public key)>`. Go's golang.org/x/mod/sumdb/note
// reads and writes the same bytes (tests/interop).
//
// Signatures use node:crypto's Ed25519 (synchronous OpenSSL, as the rest of the gateway's
// Ed25519 verification does); a signer is built from a 32-byte seed. Pure otherwise.
import { createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';

/** The algorithm byte of Ed25519 in key ids and verifier keys. */
const ED25519 = 0x01;
const EM_DASH_PREFIX = '\u2014 ';
/** PKCS#8 DER of an Ed25519 private key, up to the 32 seed bytes (RFC 8410). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** SPKI DER of an Ed25519 public key, up to the 32 key bytes. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MAX_SIGNATURES = 100;

/** A key name: not empty, no whitespace, no `+` (the verifier key's separator). */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name);
}

/** The 4-byte key id of an Ed25519 key, as a number. */
export function noteKeyId(name: string, publicKey: Uint8Array): number {
  const digest = createHash('sha256')
    .update(name)
    .update('\n')
    .update(Uint8Array.of(ED25519))
    .update(publicKey)
    .digest();
  return digest.readUInt32BE(0);
}

export interface NoteVerifierKey {
  readonly name: string;
  readonly keyId: number;
  /** 32 bytes. */
  readonly publicKey: Uint8Array;
}

/** `<name>+<hex id>+<base64(0x01 ‖ key)>`. */
export function formatVerifierKey(name: string, publicKey: Uint8Array): string {
  const id = noteKeyId(name, publicKey).toString(16).padStart(8, '0');
  const key = Buffer.concat([Uint8Array.of(ED25519), publicKey]).toString('base64');
  return `${name}+${id}+${key}`;
}

/** A verifier key's parts, or a sentence saying what is wrong with it. */
export function parseVerifierKey(text: string): NoteVerifierKey | string {
  return parseKeyString(text, ED25519, noteKeyId, 'an Ed25519 key (0x01 and 32 bytes)');
}

/**
 * A key written `<name>+<8 hex digits>+<base64(type ‖ 32-byte key)>` (signed-note verifier keys,
 * witness keys): its parts once the type byte and the key id check, else what is wrong.
 */
export function parseKeyString(
  text: string,
  type: number,
  keyIdOf: (name: string, publicKey: Uint8Array) => number,
  typeName: string,
): { name: string; keyId: number; publicKey: Uint8Array } | string {
  // The base64 key may hold `+` itself: only the first two separate.
  const trimmed = text.trim();
  const first = trimmed.indexOf('+');
  const second = trimmed.indexOf('+', first + 1);
  if (first < 0 || second < 0) return 'a verifier key is <name>+<8 hex digits>+<base64 key>';
  const name = trimmed.slice(0, first);
  const id = trimmed.slice(first + 1, second);
  const key = trimmed.slice(second + 1);
  if (!isValidKeyName(name)) return 'the key name is empty or holds whitespace';
  if (!/^[0-9a-f]{8}$/.test(id)) return 'the key id is not 8 lowercase hex digits';
  if (!BASE64.test(key)) return 'the key is not base64';
  const bytes = Buffer.from(key, 'base64');
  if (bytes.length !== 33 || bytes[0] !== type) return `the key is not ${typeName}`;
  const publicKey = Uint8Array.from(bytes.subarray(1));
  const keyId = Number.parseInt(id, 16);
  if (keyIdOf(name, publicKey) !== keyId) return 'the key id does not match the name and key';
  return { name, keyId, publicKey };
}

export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  readonly publicKey: Uint8Array;
  /** The signature line's base64 part for `text`. */
  signLine(text: string): string;
}

/** A signer named `name` with the Ed25519 key of `seed` (32 bytes). */
export function noteSigner(name: string, seed: Uint8Array): NoteSigner {
  if (!isValidKeyName(name)) throw new RangeError(`invalid note key name: ${JSON.stringify(name)}`);
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const publicKey = Uint8Array.from(Buffer.from(jwk.x as string, 'base64url'));
  const keyId = noteKeyId(name, publicKey);
  const idBytes = Buffer.alloc(4);
  idBytes.writeUInt32BE(keyId);
  return {
    name,
    keyId,
    publicKey,
    signLine(text) {
      const signature = sign(null, Buffer.from(text, 'utf8'), privateKey);
      return Buffer.concat([idBytes, signature]).toString('base64');
    },
  };
}

/** The note `text` (ending in a newline) signed by each signer, in order. */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  checkText(text);
  const lines = signers.map(
    (signer) => `${EM_DASH_PREFIX}${signer.name} ${signer.signLine(text)}\n`,
  );
  return `${text}\n${lines.join('')}`;
}

export interface NoteSignature {
  readonly name: string;
  readonly keyId: number;
  /** The signature bytes after the key id. */
  readonly signature: Uint8Array;
}

export interface ParsedNote {
  /** The signed text, ending in a newline. */
  readonly text: string;
  readonly signatures: readonly NoteSignature[];
}

function checkText(text: string): void {
  if (!text.endsWith('\n')) throw new RangeError('a note text ends with a newline');
  if (text.includes('\n\n')) throw new RangeError('a note text holds no blank line');
}

/** The text and signature lines of a signed note, or a sentence saying why it is not one. */
export function parseNote(note: string): ParsedNote | string {
  if (note.length > 1_000_000) return 'the note is larger than 1 MB';
  if (note.includes('\r')) return 'the note holds a carriage return';
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) {
    return 'a signed note is its text, a blank line, then signature lines, each ending in a newline';
  }
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > MAX_SIGNATURES)
    return `the note carries more than ${MAX_SIGNATURES} signatures`;
  const signatures: NoteSignature[] = [];
  for (const line of lines) {
    if (!line.startsWith(EM_DASH_PREFIX))
      return `a signature line starts with "— ": ${line.slice(0, 60)}`;
    const rest = line.slice(EM_DASH_PREFIX.length);
    const space = rest.lastIndexOf(' ');
    const name = rest.slice(0, space);
    const encoded = rest.slice(space + 1);
    if (space <= 0 || !isValidKeyName(name) || !BASE64.test(encoded)) {
      return `a signature line is "— <key name> <base64>": ${line.slice(0, 60)}`;
    }
    const bytes = Buffer.from(encoded, 'base64');
    if (bytes.length < 5) return `the signature of ${name} is too short`;
    signatures.push({
      name,
      keyId: bytes.readUInt32BE(0),
      signature: Uint8Array.from(bytes.subarray(4)),
    });
  }
  return { text, signatures };
}

/** Whether one of the note's signatures is a valid signature of `key` over its text. */
export function noteSignedBy(note: ParsedNote, key: NoteVerifierKey): boolean {
  const publicKey = createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, key.publicKey]),
    format: 'der',
    type: 'spki',
  });
  const text = Buffer.from(note.text, 'utf8');
  return note.signatures.some(
    (signature) =>
      signature.name === key.name &&
      signature.keyId === key.keyId &&
      signature.signature.length === 64 &&
      verify(null, text, publicKey, signature.signature),
  );
}
