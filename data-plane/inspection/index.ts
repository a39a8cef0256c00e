// Inspection detectors for MCP tool calls: destructive operations and data exfiltration.
// Pure modules (no I/O, no framework imports); compile once per configuration, call per request.
// See docs/inspection-detectors.md. Every public name is exported here.

export { DEFAULT_DESTRUCTIVE_TOOL_PATTERNS } from '../../shared/gateway-policy/destructive-tool-patterns.js';
export { canonicalizeHost, DomainAllowList } from './destinations.js';
export { compileDestructiveDetector, type DestructiveDetectorOptions } from './destructive.js';
export {
  BULK_LIMIT_ARGUMENTS,
  compileExfiltrationDetector,
  type ExfiltrationDetectorOptions,
} from './exfiltration.js';
export {
  ArgumentWalker,
  DEFAULT_INSPECTION_LIMITS,
  type InspectionLimits,
  type LeafVisitor,
  resolveInspectionLimits,
} from './limits.js';
export {
  type CallDetector,
  DESTRUCTIVE_SIGNAL_KINDS,
  type DestructiveSignalKind,
  type DetectorSignal,
  EXFILTRATION_SIGNAL_KINDS,
  type ExfiltrationSignalKind,
  type Finding,
  type ToolCallView,
} from './types.js';
export { splitWords } from './words.js';
