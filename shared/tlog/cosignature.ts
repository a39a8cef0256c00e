// C2SP tlog-cosignature, Ed25519 `cosignature/v1` (https://c2sp.org/tlog-cosignature): a witness's
// note signature over a checkpoint. Its key id is SHA-256(name ‖ "\n" ‖ 0x04 ‖ public key)[:4];
// the signature bytes are the key id, then a big-endian u64 POSIX timestamp, then the Ed25519
// signature of "cosignature/v1\ntime <timestamp>\n" followed by the checkpoint body. Go's x/mod
// 0.7 does not know this type (it is why the gateway verifies it itself). Pure.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { type NoteSignature, parseKeyString } from './signed-note.js';

/** The algorithm byte of Ed25519 cosignatures in key ids and verifier keys. */
const COSIGNATURE_V1 = 0x04;
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface WitnessKey {
  readonly name: string;
  readonly keyId: number;
  /** 32 bytes. */
  readonly publicKey: Uint8Array;
}

export function cosignatureKeyId(name: string, publicKey: Uint8Array): number {
  return createHash('sha256')
    .update(name)
    .update('\n')
    .update(Uint8Array.of(COSIGNATURE_V1))
    .update(publicKey)
    .digest()
    .readUInt32BE(0);
}

/** `<name>+<hex id>+<base64(0x04 ‖ key)>`. */
export function formatWitnessKey(name: string, publicKey: Uint8Array): string {
  const id = cosignatureKeyId(name, publicKey).toString(16).padStart(8, '0');
  return `${name}+${id}+${Buffer.concat([Uint8Array.of(COSIGNATURE_V1), publicKey]).toString('base64')}`;
}

/** A witness verifier key's parts, or a sentence saying what is wrong with it. */
export function parseWitnessKey(text: string): WitnessKey | string {
  return parseKeyString(
    text,
    COSIGNATURE_V1,
    cosignatureKeyId,
    'a cosignature/v1 Ed25519 key (0x04 and 32 bytes)',
  );
}

/** The message a cosignature signs: the header, the time line, the checkpoint body. */
export function cosignedMessage(checkpointText: string, timestamp: bigint): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${timestamp}\n${checkpointText}`, 'utf8');
}

/**
 * The time (POSIX seconds) of `key`'s valid cosignature among a note's signatures over
 * `checkpointText`, or null when it has none.
 */
export function cosignedAt(
  checkpointText: string,
  signatures: readonly NoteSignature[],
  key: WitnessKey,
): number | null {
  const publicKey = createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, key.publicKey]),
    format: 'der',
    type: 'spki',
  });
  for (const signature of signatures) {
    if (signature.name !== key.name || signature.keyId !== key.keyId) continue;
    if (signature.signature.length !== 8 + 64) continue;
    const bytes = Buffer.from(signature.signature);
    const timestamp = bytes.readBigUInt64BE(0);
    if (timestamp > 2n ** 63n - 1n) continue;
    if (verify(null, cosignedMessage(checkpointText, timestamp), publicKey, bytes.subarray(8))) {
      return Number(timestamp);
    }
  }
  return null;
}
