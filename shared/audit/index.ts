// The audit trail's hash chain: building entries, computing hashes exactly as the NPL audit
// verifier (hash version 2) does, writing and reading exports as streams, and verifying them.
// Pure: no I/O beyond the iterables passed in.
export { canonicalJson } from '../json/canonical-json.js';
export { AUDIT_ACTIONS, type AuditAction } from './actions.js';
export { chainEntry } from './chain-entry.js';
export { AUDIT_ISSUE_CODES, type AuditIssueCode } from './codes.js';
export {
  EXPORT_CHUNK_BYTES,
  formatAuditEntry,
  formatAuditExport,
  inChunksOf,
} from './export-format.js';
export {
  AuditExportSyntaxError,
  AuditExportTokenizer,
  type ExportChunkSource,
  type ExportPosition,
  type ReadAuditExportOptions,
  readAuditExport,
} from './export-reader.js';
export {
  auditHashPayload,
  computeEntryHash,
  GENESIS_HASH,
  isHashVersion2,
  SEAL_PREFIX,
  sealEntry,
} from './hash.js';
export { MAX_IDS_PER_ENTRY, pageIds } from './id-pages.js';
export { markRefusal, refusalSubjectOf } from './refusal-marks.js';
export {
  DEFAULT_MAX_REFUSAL_WINDOWS,
  DEFAULT_REFUSAL_WINDOW_MS,
  type EndedRefusalWindow,
  MAX_SUMMARY_ROUTES,
  type Refusal,
  type RefusalOverflowSummary,
  type RefusalSubject,
  type RefusalSubjectType,
  type RefusalSummary,
  type RefusalVerdict,
  RefusalWindows,
} from './refusal-windows.js';
export { toStorableAuditInput } from './storable-input.js';
export { auditLeafHash } from './tree.js';
export type {
  AuditEntry,
  AuditEntryInput,
  AuditHashFields,
  JsonObject,
  JsonPrimitive,
  JsonValue,
} from './types.js';
export {
  type AnchorFinding,
  type AnchorResult,
  AUDIT_PROOFS_FORMAT,
  type AuditProofs,
  type CheckpointOutcome,
  type CheckpointSource,
  type CheckpointStatus,
  ExportTreeTap,
  parseAuditProofs,
  type VerifyAnchorsInput,
  verifyAnchors,
  wantedByAnchors,
} from './verify-anchors.js';
export {
  type AuditEntrySource,
  type AuditIssue,
  type ChainBreakCause,
  findAuditIssueHint,
  type VerifyAuditChainOptions,
  type VerifyAuditChainResult,
  verifyAuditChain,
} from './verify-chain.js';
