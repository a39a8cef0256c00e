// NPL, the gateway's policy language: documents, conditions, evaluation and the registry.
// A pure library (no I/O, no clock); see docs/npl.md. Every public name is exported here.

export { canonicalJson, contentHash } from '../json/canonical-json.js';
export {
  BUNDLED_POLICIES,
  EU_AI_ACT_ART5_PROHIBITED,
  NATO_PROU_STRICT_FINANCIAL,
} from './bundled.js';
export {
  NPL_COMPARE_OPS,
  NPL_CONTEXT_ROOTS,
  NPL_METHODS,
  type NplConditionAst,
  type NplExpr,
} from './condition/ast.js';
export { MAX_CONDITION_LENGTH, MAX_NESTING, parseCondition } from './condition/parse.js';
export { printCondition } from './condition/print.js';
export { MAX_PATTERN_LENGTH } from './condition/regex.js';
export { parsePolicy, type SafeParsePolicyResult, safeParsePolicy } from './document.js';
export {
  formatIssuePath,
  NPL_ERROR_CODES,
  NPL_ISSUE_CODES,
  NplError,
  type NplErrorCode,
  type NplIssue,
  type NplIssueCode,
  type NplPathSegment,
} from './errors.js';
export {
  buildFailClosedPolicy,
  type CompiledPolicy,
  compileCondition,
  compilePolicy,
  evaluateCondition,
  evaluatePolicies,
  evaluatePolicy,
  NO_POLICY_DECISION,
} from './evaluate.js';
export {
  createBundledRegistry,
  InMemoryNplRegistry,
  type InMemoryNplRegistryOptions,
  loadPinnedPolicies,
  loadPinnedPolicy,
  type NplPublishResult,
  type NplRegistry,
  type NplRegistryEntry,
} from './registry.js';
export { type PublishedPolicyVersion, sameAsPreviousWarning } from './same-as-previous.js';
export {
  NPL_ACTION_RANK,
  NPL_ACTIONS,
  NPL_RULE_IDS,
  NPL_SEVERITIES,
  type NplAction,
  type NplContext,
  type NplDecision,
  type NplPolicy,
  type NplRule,
  type NplSeverity,
} from './types.js';
export {
  formatPolicyUri,
  NPL_URI_SCHEME,
  type NplPolicyRef,
  POLICY_URI_FORM,
  POLICY_URI_PATTERN,
  parsePolicyUri,
} from './uri.js';
