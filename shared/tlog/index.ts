// Transparency-log primitives the audit trail is anchored with: RFC 9162 Merkle trees and proofs,
// C2SP signed notes and checkpoints. Pure.
export { type Checkpoint, formatCheckpoint, isValidOrigin, parseCheckpoint } from './checkpoint.js';
export {
  cosignatureKeyId,
  cosignedAt,
  cosignedMessage,
  formatWitnessKey,
  parseWitnessKey,
  type WitnessKey,
} from './cosignature.js';
export {
  consistencyProofRanges,
  EMPTY_TREE_ROOT,
  foldNodes,
  HASH_BYTES,
  type HashedNode,
  inclusionProofRanges,
  type LeafRange,
  leafHash,
  MerkleFrontier,
  nodeHash,
  nodesOfRanges,
  rangeNodes,
  type TreeNode,
  verifyConsistency,
  verifyInclusion,
} from './merkle.js';
export {
  formatVerifierKey,
  isValidKeyName,
  type NoteSignature,
  type NoteSigner,
  type NoteVerifierKey,
  noteKeyId,
  noteSignedBy,
  noteSigner,
  type ParsedNote,
  parseNote,
  parseVerifierKey,
  signNote,
} from './signed-note.js';
