// Compiled policies and their evaluation, the gateway's hot path. Everything that depends only on
// the policy is done in compilePolicy: conditions become closures, the agent scope becomes a Set,
// and every possible decision is built once and frozen. evaluatePolicy then allocates nothing:
// it checks the scope, runs the closures in document order and returns a shared decision.

import { contentHash } from '../json/canonical-json.js';
import type { NplConditionAst } from './condition/ast.js';
import { compileAst, type Test } from './condition/compile.js';
import { parseCondition, toConditionIssue } from './condition/parse.js';
import { collectPathRoots } from './condition/path-roots.js';
import { findCachedRuleAst, isParsedPolicy, safeParsePolicy } from './document.js';
import { NplError, type NplIssue } from './errors.js';
import {
  NPL_ACTION_RANK,
  NPL_RULE_IDS,
  type NplAction,
  type NplContext,
  type NplDecision,
  type NplPolicy,
  type NplSeverity,
} from './types.js';
import { formatPolicyUri, parsePolicyUri } from './uri.js';

const CONDITION_ISSUES = new Set([
  'condition_syntax',
  'unknown_identifier',
  'unknown_method',
  'invalid_operand',
  'invalid_regex',
  'limit_exceeded',
]);

export interface CompiledPolicy {
  /** The source document; `null` for a fail-closed stand-in (see buildFailClosedPolicy). */
  readonly policy: NplPolicy | null;
  readonly uri: string;
  readonly contentHash: string;
  readonly allAgents: boolean;
  readonly agents: ReadonlySet<unknown>;
  readonly tests: readonly Test[];
  /** decisions[i] is returned when tests[i] is the first to match. */
  readonly decisions: readonly NplDecision[];
  readonly defaultDecision: NplDecision;
  readonly outOfScopeDecision: NplDecision;
  readonly errorDecision: NplDecision;
  /** The context roots its conditions read (`tool`, `usage`…): what evaluation needs. */
  readonly pathRoots: ReadonlySet<string>;
}

const EMPTY_CONTEXT: object = Object.freeze({});
const hasOwn = Object.prototype.hasOwnProperty;

function decision(
  matched: boolean,
  action: NplAction,
  ruleId: string,
  reason: string,
  alertSeverity: NplSeverity,
  policyName: string,
  policyVersion: string,
  policyUri: string,
): NplDecision {
  return Object.freeze({
    matched,
    action,
    ruleId,
    reason,
    alertSeverity,
    policyName,
    policyVersion,
    policyUri,
  });
}

/** Returned by evaluatePolicies when it is given no policy at all. */
export const NO_POLICY_DECISION: NplDecision = decision(
  false,
  'ALLOW',
  NPL_RULE_IDS.defaultAllow,
  'No NPL policy applies',
  'LOW',
  '',
  '',
  '',
);

/** Compiles a validated policy; throws NplError if the document or a condition is invalid. */
export function compilePolicy(policy: NplPolicy): CompiledPolicy {
  let source = policy;
  if (!isParsedPolicy(policy)) {
    const parsed = safeParsePolicy(policy);
    if (!parsed.success) {
      const issues = parsed.error.issues;
      const onlyConditions = issues.every((issue) => CONDITION_ISSUES.has(issue.code));
      throw new NplError(onlyConditions ? 'NPL_INVALID_CONDITION' : 'NPL_INVALID_DOCUMENT', issues);
    }
    source = parsed.policy;
  }
  const name = source.policyName;
  const version = source.version;
  const uri = formatPolicyUri({ name, version });
  const tests: Test[] = [];
  const decisions: NplDecision[] = [];
  const pathRoots = new Set<string>();
  for (const rule of source.rules) {
    const ast = findCachedRuleAst(rule) as NplConditionAst;
    collectPathRoots(ast, pathRoots);
    tests.push(compileAst(ast));
    decisions.push(
      decision(
        true,
        rule.action,
        rule.ruleId,
        `Rule ${rule.ruleId} matched: ${rule.condition}`,
        rule.alertSeverity,
        name,
        version,
        uri,
      ),
    );
  }
  return Object.freeze({
    policy: source,
    uri,
    contentHash: contentHash(source),
    allAgents: source.targetAgents.includes('*'),
    agents: new Set<unknown>(source.targetAgents),
    tests: Object.freeze(tests),
    decisions: Object.freeze(decisions),
    pathRoots,
    defaultDecision: decision(
      false,
      'ALLOW',
      NPL_RULE_IDS.defaultAllow,
      'No NPL rules matched',
      'LOW',
      name,
      version,
      uri,
    ),
    outOfScopeDecision: decision(
      false,
      'ALLOW',
      NPL_RULE_IDS.agentNotInScope,
      'Agent role not targeted by policy',
      'LOW',
      name,
      version,
      uri,
    ),
    errorDecision: decision(
      true,
      'BLOCK',
      NPL_RULE_IDS.evaluationError,
      'The evaluation context could not be read; fail-closed',
      'CRITICAL',
      name,
      version,
      uri,
    ),
  });
}

/**
 * The fail-closed stand-in for a pinned policy that could not be resolved: it BLOCKs every
 * request (ruleId NPL_REGISTRY_FAIL_CLOSED, CRITICAL), whatever the agent.
 */
export function buildFailClosedPolicy(uri: string, cause: string): CompiledPolicy {
  let name = '';
  let version = '';
  try {
    ({ name, version } = parsePolicyUri(uri));
  } catch {
    // a malformed URI still fails closed; the decision then names no policy
  }
  const blocked = decision(
    true,
    'BLOCK',
    NPL_RULE_IDS.registryFailClosed,
    `Policy ${uri} could not be resolved (${cause}); fail-closed`,
    'CRITICAL',
    name,
    version,
    typeof uri === 'string' ? uri : '',
  );
  return Object.freeze({
    policy: null,
    uri: typeof uri === 'string' ? uri : '',
    contentHash: '',
    allAgents: true,
    agents: new Set<unknown>(),
    tests: Object.freeze([() => true]),
    decisions: Object.freeze([blocked]),
    defaultDecision: blocked,
    outOfScopeDecision: blocked,
    errorDecision: blocked,
    pathRoots: new Set<string>(),
  });
}

/**
 * First matching rule in document order; no match → ALLOW `npl_default_allow`; an `agentRole`
 * outside `targetAgents` (without `*`) → ALLOW `npl_agent_not_in_scope`. Never throws: a
 * context whose properties cannot be read (a throwing getter or proxy — never JSON) yields the
 * fail-closed BLOCK `npl_evaluation_error`. The returned decision is shared and frozen.
 */
export function evaluatePolicy(compiled: CompiledPolicy, ctx: NplContext): NplDecision {
  const c: object = ctx !== null && typeof ctx === 'object' ? ctx : EMPTY_CONTEXT;
  try {
    if (!compiled.allAgents) {
      const role = hasOwn.call(c, 'agentRole') ? (c as NplContext).agentRole : undefined;
      if (role && !compiled.agents.has(role)) return compiled.outOfScopeDecision;
    }
    const tests = compiled.tests;
    for (let i = 0; i < tests.length; i++) {
      if (tests[i]!(c)) return compiled.decisions[i]!;
    }
    return compiled.defaultDecision;
  } catch {
    return compiled.errorDecision;
  }
}

/** The most restrictive decision (BLOCK > REQUIRE_HUMAN > SIMULATE > ALLOW); ties go to the earlier policy. */
export function evaluatePolicies(
  compiled: readonly CompiledPolicy[],
  ctx: NplContext,
): NplDecision {
  let best = NO_POLICY_DECISION;
  let bestRank = -1;
  for (let i = 0; i < compiled.length; i++) {
    const d = evaluatePolicy(compiled[i]!, ctx);
    const rank = NPL_ACTION_RANK[d.action];
    if (rank > bestRank) {
      best = d;
      bestRank = rank;
      if (rank === NPL_ACTION_RANK.BLOCK) break;
    }
  }
  return best;
}

function conditionError(src: string, issues: readonly NplIssue[]): NplError {
  return new NplError(
    'NPL_INVALID_CONDITION',
    issues,
    `invalid condition ${JSON.stringify(src.slice(0, 80))}: ${issues[0]?.message ?? ''}`,
  );
}

/** Parses, checks and compiles one condition; throws NplError NPL_INVALID_CONDITION. */
export function compileCondition(src: string): (ctx: NplContext) => boolean {
  const parsed = parseCondition(src);
  if (!parsed.ok) {
    throw conditionError(
      String(src),
      parsed.problems.map((problem) => toConditionIssue(String(src), problem)),
    );
  }
  const test = compileAst(parsed.ast);
  return (ctx) => test(ctx !== null && typeof ctx === 'object' ? ctx : EMPTY_CONTEXT);
}

/** One-shot `compileCondition(src)(ctx)`; compile once instead on any hot path. */
export function evaluateCondition(src: string, ctx: NplContext): boolean {
  return compileCondition(src)(ctx);
}
