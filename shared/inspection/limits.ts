// How much of a call's arguments is inspected: the data plane's detectors and the control plane's
// masking of approval arguments stop at the same bounds. Pure module: no I/O, no framework imports.
//
// "Bytes" are UTF-16 code units (`string.length`): that is what scanning costs.

export interface InspectionLimits {
  /** Deepest container nesting walked; the arguments object itself is depth 1. */
  readonly maxDepth: number;
  /** Values visited (containers and leaves, including array holes). */
  readonly maxNodes: number;
  /** String leaves visited. */
  readonly maxStrings: number;
  /** Longest single string inspected. */
  readonly maxStringBytes: number;
  /** Total length of all strings inspected. */
  readonly maxTotalBytes: number;
  /** Expensive candidates examined per call: URLs/emails parsed, nested shell/SQL bodies. */
  readonly maxCandidates: number;
}

export const DEFAULT_INSPECTION_LIMITS: InspectionLimits = Object.freeze({
  maxDepth: 64,
  maxNodes: 20_000,
  maxStrings: 5_000,
  maxStringBytes: 256 * 1024,
  maxTotalBytes: 1024 * 1024,
  maxCandidates: 1_000,
});
