// Policy documents: YAML or JSON text (or an already-parsed object) → a validated, deeply frozen
// NplPolicy. The shape is checked by the schema (policy-schema.ts); what a schema cannot say —
// unique ruleIds, conditions that parse and pass their static checks — is checked here. Every
// problem is collected before failing, in document order; each issue has a JSON path and, when
// the document came as text, its line and column there. Condition ASTs are kept (WeakMap keyed
// by the frozen rule) for compilePolicy.

import { isRecord } from '../json/is-record.js';
import type { NplConditionAst } from './condition/ast.js';
import { parseCondition, toConditionIssue } from './condition/parse.js';
import { compareSortPaths, type PlacedIssue, toDocumentIssues } from './document-issues.js';
import { type PolicyText, readPolicyText } from './document-text.js';
import { NplError, type NplIssue } from './errors.js';
import { nplPolicySchema } from './policy-schema.js';
import type { NplPolicy, NplRule } from './types.js';

export { MAX_TEXT_NESTING } from './document-text.js';

/** ASTs of the conditions of rules produced by parsePolicy. */
const ruleAsts = new WeakMap<NplRule, NplConditionAst>();
const parsedPolicies = new WeakSet<NplPolicy>();

export function findCachedRuleAst(rule: NplRule): NplConditionAst | undefined {
  return ruleAsts.get(rule);
}

export function isParsedPolicy(policy: NplPolicy): boolean {
  return parsedPolicies.has(policy);
}

/** `warnings` (e.g. `always_false`) come back on both outcomes; they never fail a document. */
export type SafeParsePolicyResult =
  | { readonly success: true; readonly policy: NplPolicy; readonly warnings: readonly NplIssue[] }
  | { readonly success: false; readonly error: NplError; readonly warnings: readonly NplIssue[] };

interface FoundIssue extends PlacedIssue {
  /** Character offset inside the condition text, for its source position. */
  readonly offset?: number;
}

/**
 * The checks beyond the shape, on whatever rules are readable even when others are not: a
 * ruleId used twice, and conditions (parsed once; their ASTs are returned by rule index).
 * Condition warnings go to `warned`.
 */
function checkRules(
  rules: unknown,
  found: FoundIssue[],
  warned: FoundIssue[],
): Map<number, NplConditionAst> {
  const asts = new Map<number, NplConditionAst>();
  if (!Array.isArray(rules)) return asts;
  const firstIndexOfId = new Map<string, number>();
  rules.forEach((rule: unknown, i) => {
    if (!isRecord(rule)) return;
    const { ruleId, condition } = rule;
    if (typeof ruleId === 'string' && ruleId !== '') {
      const first = firstIndexOfId.get(ruleId);
      if (first === undefined) firstIndexOfId.set(ruleId, i);
      else {
        const path = ['rules', i, 'ruleId'];
        const issue: NplIssue = {
          code: 'duplicate_rule_id',
          message: `ruleId ${JSON.stringify(ruleId)} is already used by rules[${first}]`,
          path,
          hint: 'every rule needs its own ruleId',
        };
        found.push({ issue, at: path });
      }
    }
    if (typeof condition !== 'string' || condition === '') return;
    const parsed = parseCondition(condition);
    const path = ['rules', i, 'condition'];
    for (const warning of parsed.warnings) {
      const issue = toConditionIssue(condition, warning, { path, ruleIndex: i });
      warned.push({ issue, at: path, offset: warning.offset });
    }
    if (parsed.ok) {
      asts.set(i, parsed.ast);
      return;
    }
    for (const problem of parsed.problems) {
      const issue = toConditionIssue(condition, problem, { path, ruleIndex: i });
      found.push({ issue, at: path, offset: problem.offset });
    }
  });
  return asts;
}

function locateAll(found: FoundIssue[], text: PolicyText | undefined): NplIssue[] {
  // Stable sort: issues at the same place keep the order they were found in.
  found.sort((a, b) => compareSortPaths(a.at, b.at));
  return found.map(({ issue, offset }) => {
    const source = text?.locate(issue.path, offset, issue.code === 'unknown_field');
    return source ? { ...issue, source } : issue;
  });
}

interface Validated {
  /** The policy, or every error found. */
  readonly result: NplPolicy | NplIssue[];
  readonly warnings: NplIssue[];
}

function validate(data: unknown, text: PolicyText | undefined): Validated {
  const result = nplPolicySchema.safeParse(data, { reportInput: true });
  const found: FoundIssue[] = result.success ? [] : toDocumentIssues(result.error.issues);
  const warned: FoundIssue[] = [];
  const asts = checkRules(isRecord(data) ? data.rules : undefined, found, warned);
  const warnings = locateAll(warned, text);
  if (!result.success || found.length > 0) return { result: locateAll(found, text), warnings };
  const doc: NplPolicy = result.data;
  const rules = doc.rules.map((rule, i) => {
    const frozen: NplRule = Object.freeze({
      ruleId: rule.ruleId,
      action: rule.action,
      condition: rule.condition,
      alertSeverity: rule.alertSeverity,
    });
    ruleAsts.set(frozen, asts.get(i)!);
    return frozen;
  });
  const policy: NplPolicy = Object.freeze({
    version: doc.version,
    policyName: doc.policyName,
    ...(doc.description === undefined ? {} : { description: doc.description }),
    targetAgents: Object.freeze([...doc.targetAgents]),
    rules: Object.freeze(rules),
  });
  parsedPolicies.add(policy);
  return { result: policy, warnings };
}

/** Validates a policy document; returns every problem at once instead of throwing. */
export function safeParsePolicy(source: string | object): SafeParsePolicyResult {
  let validated: Validated;
  if (typeof source === 'string') {
    const text = readPolicyText(source);
    validated = Array.isArray(text) ? { result: text, warnings: [] } : validate(text.data, text);
  } else {
    validated = validate(source, undefined);
  }
  const { result, warnings } = validated;
  if (Array.isArray(result)) {
    return { success: false, error: new NplError('NPL_INVALID_DOCUMENT', result), warnings };
  }
  return { success: true, policy: result, warnings };
}

/** Validates a policy document (YAML/JSON text or object); throws NplError NPL_INVALID_DOCUMENT. */
export function parsePolicy(source: string | object): NplPolicy {
  const result = safeParsePolicy(source);
  if (!result.success) throw result.error;
  return result.policy;
}
