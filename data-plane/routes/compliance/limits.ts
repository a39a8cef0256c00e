// The bounds of the public batch validation endpoint. It is unauthenticated, so every request
// must stay cheap: sizes and counts are checked before any policy is parsed, and evaluation is
// charged against a work budget (see work.ts) before any tool call is evaluated. The defaults
// keep the worst case near half a second of CPU (docs/compliance-batch.md, "Limits").

export interface ComplianceLimits {
  /** Largest request body in bytes (413 REQUEST_TOO_LARGE). */
  readonly maxBodyBytes: number;
  /** Deepest JSON nesting of the body; the body object itself is depth 1 (400 REQUEST_INVALID). */
  readonly maxDepth: number;
  /** Items per batch. */
  readonly maxItems: number;
  /** Tool calls in all items together. */
  readonly maxToolCalls: number;
  /** UTF-8 bytes of one inline policy (its text, or the JSON text of an object). */
  readonly maxPolicyBytes: number;
  /** UTF-8 bytes of all inline policies of a batch together. */
  readonly maxTotalPolicyBytes: number;
  /** Estimated nesting of a policy text (flow brackets + indentation + indicators on a line). */
  readonly maxPolicyTextNesting: number;
  /** Evaluation work units for the whole batch (work.ts). */
  readonly maxWork: number;
}

export const DEFAULT_COMPLIANCE_LIMITS: ComplianceLimits = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  maxDepth: 64,
  maxItems: 100,
  maxToolCalls: 1000,
  maxPolicyBytes: 256 * 1024,
  maxTotalPolicyBytes: 384 * 1024,
  maxPolicyTextNesting: 128,
  maxWork: 25_000_000,
});

/** Longest client correlation id. */
export const MAX_ITEM_ID_LENGTH = 128;
