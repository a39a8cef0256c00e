// The audit chain as the leaves of an RFC 9162 Merkle tree (docs/audit.md, "Checkpoints"): the
// leaf data of the entry at seq is the 32 raw bytes of its chain hash, at leaf index seq − 1, so
// the tree of size n covers entries 1..n and the chain and the export stay exactly as they are.
import { leafHash } from '../tlog/merkle.js';

/** The leaf hash of an entry: SHA-256(0x00 ‖ the 32 bytes its 64-hex-digit hash names). */
export function auditLeafHash(entryHash: string): Uint8Array {
  return leafHash(Buffer.from(entryHash, 'hex'));
}
