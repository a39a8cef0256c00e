// The W3C Bitstring Status List encoding (https://www.w3.org/TR/vc-bitstring-status-list/):
// `encodedList` is the multibase base64url form (`u`, no padding) of the GZIP-compressed
// bitstring; bit index 0 is the most significant bit of the first byte, as Digital Bazaar's
// @digitalbazaar/vc-bitstring-status-list reads it (leftToRightIndexing). Every list we make has
// exactly STATUS_LIST_SIZE entries, the spec's minimum (herd privacy); a tenant gets another list
// when one is full.
//
// Decoding reads lists from snapshots and status-list credentials, so it is defensive: a list is
// exactly STATUS_LIST_SIZE bits, and decompression stops at that size, so a small "gzip bomb"
// cannot make the gateway allocate more than one list.
import { gunzipSync, gzipSync } from 'node:zlib';
import { gatewayError } from '../errors/index.js';

/** Entries in one status list: 131072 bits (16 KiB), the minimum the spec requires. */
export const STATUS_LIST_SIZE = 131_072;
const LIST_BYTES = STATUS_LIST_SIZE / 8;
/** `u` and base64url without padding. */
const ENCODED_LIST = /^u[A-Za-z0-9_-]+$/;
/**
 * GZIP of 16 KiB can exceed 16 KiB by a few header and block bytes (stored blocks); four times
 * that as text is far beyond any honest list and stops absurd input before it is decoded.
 */
const MAX_ENCODED_LENGTH = 4 * LIST_BYTES;

/** The `encodedList` of a bitstring of exactly STATUS_LIST_SIZE bits (LIST_BYTES bytes). */
export function encodeStatusList(bits: Uint8Array): string {
  if (bits.length !== LIST_BYTES) {
    throw new RangeError(`a status list has ${LIST_BYTES} bytes, not ${bits.length}`);
  }
  return `u${gzipSync(bits).toString('base64url')}`;
}

/**
 * The bitstring of an `encodedList`. Throws CREDENTIAL_MALFORMED (naming `hop`, by default
 * `status-list`) unless it is `u` + base64url of GZIP data that decompresses to exactly
 * STATUS_LIST_SIZE bits.
 */
export function decodeStatusList(
  encoded: string,
  hop: number | string = 'status-list',
): Uint8Array {
  const malformed = (problem: string) =>
    gatewayError('CREDENTIAL_MALFORMED', { hop, problem: `encodedList ${problem}` });
  if (typeof encoded !== 'string' || !ENCODED_LIST.test(encoded)) {
    throw malformed("is not multibase base64url ('u' and base64url without padding)");
  }
  if (encoded.length > MAX_ENCODED_LENGTH) {
    throw malformed(`has ${encoded.length} characters, more than ${MAX_ENCODED_LENGTH}`);
  }
  let bits: Buffer;
  try {
    bits = gunzipSync(Buffer.from(encoded.slice(1), 'base64url'), {
      maxOutputLength: LIST_BYTES,
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw malformed(`decompresses to more than ${STATUS_LIST_SIZE} bits`);
    }
    throw malformed('is not GZIP data');
  }
  if (bits.length !== LIST_BYTES) {
    throw malformed(`decompresses to ${bits.length * 8} bits, fewer than ${STATUS_LIST_SIZE}`);
  }
  return new Uint8Array(bits.buffer, bits.byteOffset, bits.length);
}

function position(bits: Uint8Array, index: number): number {
  if (!Number.isSafeInteger(index) || index < 0 || index >= bits.length * 8) {
    throw new RangeError(`status list index ${index} is outside 0-${bits.length * 8 - 1}`);
  }
  return index >>> 3;
}

/** True when entry `index` is set (index 0 = most significant bit of byte 0). */
export function isBitSet(bits: Uint8Array, index: number): boolean {
  return ((bits[position(bits, index)] as number) & (0x80 >>> (index & 7))) !== 0;
}

/** Sets entry `index` in place (index 0 = most significant bit of byte 0). */
export function setBit(bits: Uint8Array, index: number): void {
  const at = position(bits, index);
  bits[at] = (bits[at] as number) | (0x80 >>> (index & 7));
}
