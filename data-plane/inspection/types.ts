// Shared shapes of the inspection detectors. Pure module: no I/O, no framework imports.

/** What a detector sees of one MCP JSON-RPC call. Nothing in it is trusted. */
export interface ToolCallView {
  /** The JSON-RPC method, e.g. `tools/call`. */
  readonly method: string;
  /** `params.name` when it is a string. */
  readonly toolName: string | undefined;
  /** `params.arguments`: any JSON value (normally an object). */
  readonly args: unknown;
  /** The upstream's own annotations for this tool, learnt from `tools/list`. */
  readonly annotations?:
    | { readonly destructiveHint?: boolean; readonly readOnlyHint?: boolean }
    | undefined;
}

export const DESTRUCTIVE_SIGNAL_KINDS = [
  'annotation',
  'tool-name',
  'sql',
  'shell',
  'http-method',
  'inspection-limit',
] as const;
export type DestructiveSignalKind = (typeof DESTRUCTIVE_SIGNAL_KINDS)[number];

export const EXFILTRATION_SIGNAL_KINDS = [
  'secret',
  'bulk-export',
  'destination',
  'inspection-limit',
] as const;
export type ExfiltrationSignalKind = (typeof EXFILTRATION_SIGNAL_KINDS)[number];

/**
 * Why a detector fired. `detail` names the rule (`DROP TABLE`, `rm -rf`, `AWS access key id`),
 * never a secret value; `path` locates the argument (`arguments.query`, `arguments.argv[0]`).
 */
export interface DetectorSignal {
  readonly kind: string;
  readonly detail: string;
  readonly path?: string;
}

/** A compiled detector: pure, never throws, returns the first signal found or null. */
export type CallDetector = (call: ToolCallView) => DetectorSignal | null;

export type { Finding } from '../../shared/inspection/types.js';
