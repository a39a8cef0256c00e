// The closed set of problems `verifyAuditChain` reports, with a summary and an operator hint for
// each. These are findings about a file, returned as data, not errors the gateway throws: their
// messages vary with what the verifier found (five kinds of broken link alone), so they do not
// fit the registry's one template per code and stay a table of their own, with the registry's
// entry shape. A test keeps the two sets of codes apart, and docs/audit.md lists these codes.
import type { CodeInfo } from '../errors/index.js';

export const AUDIT_ISSUE_CODES = {
  AUDIT_MALFORMED_JSON: {
    status: null,
    summary:
      'The export is not a well-formed JSON array of entries: a syntax error, a file that ends early, or data after the closing bracket.',
    hint: "A file that ends inside an entry was cut off while it was written: export it again. JSON Lines (the console's Export JSON Lines) is for analysis and carries no chain: verify the output of `agent-gateway audit export`, the console's Verifiable export or GET /api/v1/audit/export (docs/audit-storage.md). Otherwise fix the JSON at the reported position.",
  },
  AUDIT_MISSING_FIELD: {
    status: null,
    summary: 'An entry lacks a required field.',
    hint: 'Every entry needs id, tenantId, action, resourceType, resourceId, createdAt, hash and prevHash; the export was not produced by an audit exporter or was edited.',
  },
  AUDIT_INVALID_FIELD: {
    status: null,
    summary: 'An entry field has the wrong type or form.',
    hint: 'Fields are strings, hash and prevHash are 64 lowercase hex digits (prevHash may be null), metadata is an object or null.',
  },
  AUDIT_TENANT_MIXED: {
    status: null,
    summary: 'The export holds entries of more than one tenant; each tenant has its own chain.',
    hint: 'Export and verify one tenant at a time.',
  },
  AUDIT_CHAIN_BROKEN: {
    status: null,
    summary:
      "An entry's prevHash is not the hash of the entry before it: entries were deleted, reordered, duplicated or inserted.",
    hint: 'The message says whether the predecessor appears elsewhere in the export (reordered, duplicated) or nowhere (deleted). For an export that deliberately starts mid-chain use --partial or --after <hash>.',
  },
  AUDIT_HASH_MISMATCH: {
    status: null,
    summary:
      "The hash recomputed from the entry's content differs from its stored hash: a hashed field was edited after the entry was written.",
    hint: 'Compare the entry with the system of record; every hashed field (tenantId, action, resourceType, resourceId, createdAt, the seal in `after`, and metadata tool, actorType, confidence, regulatoryRelevance) is a suspect.',
  },
  AUDIT_SEAL_MISMATCH: {
    status: null,
    summary:
      'The id or the metadata differs from the seal in the hashed `after` field: one of them was edited after the entry was written.',
    hint: "Compare the entry's id and metadata with the system of record.",
  },
  AUDIT_TIMESTAMP_ORDER: {
    status: null,
    summary:
      "An entry's createdAt is earlier than its predecessor's, although the chain links are intact.",
    hint: "The writer that appended it ignored the chain head's last timestamp (a clock stepped back); the entries themselves were not edited.",
  },
  AUDIT_HEAD_MISSING: {
    status: null,
    summary: 'No entry of the export has the head hash the verifier was told to expect.',
    hint: 'Entries at the end of the chain were removed, or the expected head belongs to another tenant or a later export.',
  },
  AUDIT_CHECKPOINT_INVALID: {
    status: null,
    summary:
      'A checkpoint given to the verifier is not a C2SP signed note carrying a tlog checkpoint.',
    hint: 'Give the text GET /api/v1/audit/checkpoint answered (the note, signature lines included), byte for byte.',
  },
  AUDIT_CHECKPOINT_SIGNATURE_INVALID: {
    status: null,
    summary: 'A checkpoint carries no valid signature of any verifier key the verifier trusts.',
    hint: "Pass the gateway's audit verifier key with --key (GET /api/v1/audit/checkpoint/key lists the current and retired ones); a checkpoint whose signature fails with the right key was edited.",
  },
  AUDIT_CHECKPOINT_TENANT_MISMATCH: {
    status: null,
    summary: "A checkpoint's origin names another tenant or another gateway than the export's.",
    hint: "Verify each tenant's export with that tenant's checkpoints: the origin line is `<gateway>/audit/<tenant id>`.",
  },
  AUDIT_CHECKPOINT_ROOT_MISMATCH: {
    status: null,
    summary:
      "The export's first n entries do not hash to the root of a signed checkpoint of size n: the history was rewritten after the checkpoint was cut (entries removed, changed or inserted and the chain recomputed).",
    hint: 'Treat the export as tampered: the message names the range of entries between the last checkpoint that matched and the first that does not. Compare with another copy of the trail.',
  },
  AUDIT_CHECKPOINT_NOT_REACHED: {
    status: null,
    summary:
      'A checkpoint covers more entries than the export, and no consistency proof shows the export as the start of its tree: the export may have been truncated or rewritten.',
    hint: 'Export again (the export then reaches the checkpoint), or verify with the proofs file `audit export --proofs` wrote beside the export (--proofs).',
  },
  AUDIT_CHECKPOINTS_INCONSISTENT: {
    status: null,
    summary:
      'Two signed checkpoints disagree: one tree size with two roots, or a consistency proof that does not link them. The gateway showed different histories to different parties (a split view).',
    hint: 'Keep both checkpoints as evidence: each is signed by the audit key. Ask who controls the gateway and its database.',
  },
  AUDIT_PROOF_INVALID: {
    status: null,
    summary:
      'A proof in the proofs file does not verify: it names an entry that is not in the export, a tree size no verified checkpoint has, or hashes that do not lead to the checkpoint root.',
    hint: 'Use the proofs file written with this export (`audit export --proofs`) or fetch fresh proofs (GET /api/v1/audit/proof/...); a proof that fails against a valid checkpoint means the export is not the history the checkpoint signs.',
  },
} as const satisfies Record<string, CodeInfo>;

export type AuditIssueCode = keyof typeof AUDIT_ISSUE_CODES;
