// Policy documents: YAML or JSON text (or an already-parsed object) → a validated, deeply frozen
// NplPolicy. Validation collects every problem before failing; each issue has a JSON path and,
// when the document came as text, its line and column there. Conditions are parsed and checked
// here too, and their ASTs are kept (WeakMap keyed by the frozen rule) for compilePolicy.
import { isDocument, isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import type { NplConditionAst } from './condition/ast.js';
import { parseCondition, toConditionIssue } from './condition/parse.js';
import { NplError, type NplIssue, type NplPathSegment } from './errors.js';
import { estimateTextNesting } from './text-nesting.js';
import {
  NPL_ACTIONS,
  NPL_SEVERITIES,
  type NplAction,
  type NplPolicy,
  type NplRule,
  type NplSeverity,
} from './types.js';
import { KEBAB_CASE, SEMVER } from './uri.js';

const TOP_LEVEL_FIELDS = ['version', 'policyName', 'description', 'targetAgents', 'rules'];
const RULE_FIELDS = ['ruleId', 'action', 'condition', 'alertSeverity'];
const MAX_SOURCE_LENGTH = 64 * 1024 * 1024;
/** Deepest nesting of a policy text (YAML flow and block levels) the parser is given. */
export const MAX_TEXT_NESTING = 128;

/** ASTs of the conditions of rules produced by parsePolicy. */
const ruleAsts = new WeakMap<NplRule, NplConditionAst>();
const parsedPolicies = new WeakSet<NplPolicy>();

export function cachedRuleAst(rule: NplRule): NplConditionAst | undefined {
  return ruleAsts.get(rule);
}

export function isParsedPolicy(policy: NplPolicy): boolean {
  return parsedPolicies.has(policy);
}

export type SafeParsePolicyResult =
  | { readonly success: true; readonly policy: NplPolicy }
  | { readonly success: false; readonly error: NplError };

type Rec = Record<string, unknown>;

function isRecord(value: unknown): value is Rec {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value === 'object' ? 'object' : typeof value;
}

interface Located {
  readonly data: unknown;
  /** Source position of a path (best effort), and of a condition's character `offset`. */
  locate(
    path: readonly NplPathSegment[],
    offset?: number,
    atKey?: boolean,
  ): { line: number; column: number } | undefined;
}

function fromText(source: string): Located | NplIssue[] {
  if (source.length > MAX_SOURCE_LENGTH) {
    return [
      {
        code: 'syntax',
        message: `document is larger than ${MAX_SOURCE_LENGTH} characters`,
        path: [],
      },
    ];
  }
  // The YAML composer recurses once per nesting level: bound the depth from the tokens first, so
  // hostile text gets an issue instead of exhausting the stack (or worse) inside the parser.
  if (estimateTextNesting(source, MAX_TEXT_NESTING) > MAX_TEXT_NESTING) {
    return [
      {
        code: 'limit_exceeded',
        message: `document nests more than ${MAX_TEXT_NESTING} levels deep`,
        path: [],
        hint: 'an NPL document needs a handful of levels; flatten the document',
      },
    ];
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    return doc.errors.map((error) => {
      const pos = lineCounter.linePos(error.pos[0]);
      return {
        code: 'syntax',
        message: error.message.split('\n')[0] ?? 'syntax error',
        path: [],
        hint: 'the document must be valid YAML or JSON',
        source: { line: pos.line, column: pos.col },
      } satisfies NplIssue;
    });
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return [{ code: 'syntax', message: (error as Error).message, path: [] }];
  }
  return {
    data,
    locate(path, offset, atKey) {
      if (!isDocument(doc)) return undefined;
      if (atKey && path.length > 0) {
        const parent = doc.getIn(path.slice(0, -1), true);
        const pair = isMap(parent)
          ? parent.items.find((p) => isScalar(p.key) && p.key.value === path[path.length - 1])
          : undefined;
        const range = isScalar(pair?.key) ? pair.key.range : undefined;
        if (range) {
          const pos = lineCounter.linePos(range[0]);
          return { line: pos.line, column: pos.col };
        }
      }
      for (let n = path.length; n >= 0; n--) {
        const node = doc.getIn(path.slice(0, n), true) as
          | { range?: [number, number, number]; type?: string; value?: unknown }
          | undefined;
        const range = node?.range;
        if (!range) continue;
        let at = range[0];
        if (offset !== undefined && n === path.length && typeof node.value === 'string') {
          const quoted = node.type === 'QUOTE_SINGLE' || node.type === 'QUOTE_DOUBLE' ? 1 : 0;
          const text = node.value;
          if (source.slice(at + quoted, at + quoted + text.length) === text) at += quoted + offset;
        }
        const pos = lineCounter.linePos(at);
        return { line: pos.line, column: pos.col };
      }
      return undefined;
    },
  };
}

class Collector {
  readonly issues: NplIssue[] = [];
  constructor(private readonly located: Located | undefined) {}

  add(issue: NplIssue, offset?: number): void {
    const source = this.located?.locate(issue.path, offset, issue.code === 'unknown_field');
    this.issues.push(source ? { ...issue, source } : issue);
  }
}

function checkString(
  out: Collector,
  obj: Rec,
  field: string,
  path: readonly NplPathSegment[],
  required: boolean,
): string | undefined {
  const value = obj[field];
  if (value === undefined) {
    if (required) {
      out.add({ code: 'missing_field', message: `${field} is required`, path: [...path] });
    }
    return undefined;
  }
  if (typeof value !== 'string') {
    out.add({
      code: 'invalid_type',
      message: `${field} must be a string, not ${typeName(value)}`,
      path: [...path, field],
      hint: typeof value === 'number' ? 'quote it in YAML, e.g. "1.0.0"' : undefined,
    });
    return undefined;
  }
  return value;
}

function checkUnknownFields(
  out: Collector,
  obj: Rec,
  allowed: readonly string[],
  path: readonly NplPathSegment[],
): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      out.add({
        code: 'unknown_field',
        message: `unknown field ${JSON.stringify(key)}`,
        path: [...path, key],
        hint: `allowed fields: ${allowed.join(', ')}`,
      });
    }
  }
}

function checkEnum<T extends string>(
  out: Collector,
  rule: Rec,
  field: string,
  allowed: readonly T[],
  path: readonly NplPathSegment[],
): T | undefined {
  const value = checkString(out, rule, field, path, true);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    out.add({
      code: 'invalid_value',
      message: `${field} must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`,
      path: [...path, field],
    });
    return undefined;
  }
  return value as T;
}

function validate(data: unknown, located: Located | undefined): NplPolicy | NplIssue[] {
  const out = new Collector(located);
  if (!isRecord(data)) {
    out.add({
      code: 'invalid_type',
      message: `a policy document must be an object, not ${typeName(data)}`,
      path: [],
    });
    return out.issues;
  }
  checkUnknownFields(out, data, TOP_LEVEL_FIELDS, []);
  const version = checkString(out, data, 'version', [], true);
  if (version !== undefined && !SEMVER.test(version)) {
    out.add({
      code: 'invalid_value',
      message: `version ${JSON.stringify(version)} is not a semantic version`,
      path: ['version'],
      hint: 'write major.minor.patch, e.g. 1.0.0',
    });
  }
  const policyName = checkString(out, data, 'policyName', [], true);
  if (policyName !== undefined && !KEBAB_CASE.test(policyName)) {
    out.add({
      code: 'invalid_value',
      message: `policyName ${JSON.stringify(policyName)} is not kebab-case`,
      path: ['policyName'],
      hint: 'lower-case letters and digits separated by single hyphens, e.g. payments-guard',
    });
  }
  const description = checkString(out, data, 'description', [], false);

  const targetAgents: string[] = [];
  const agents = data.targetAgents;
  if (agents === undefined) {
    out.add({
      code: 'missing_field',
      message: 'targetAgents is required',
      path: [],
      hint: 'use ["*"] for every agent',
    });
  } else if (!Array.isArray(agents)) {
    out.add({
      code: 'invalid_type',
      message: `targetAgents must be a list of strings, not ${typeName(agents)}`,
      path: ['targetAgents'],
    });
  } else if (agents.length === 0) {
    out.add({
      code: 'empty_list',
      message: 'targetAgents must not be empty',
      path: ['targetAgents'],
      hint: 'use ["*"] for every agent',
    });
  } else {
    agents.forEach((agent: unknown, i) => {
      if (typeof agent === 'string' && agent !== '') targetAgents.push(agent);
      else {
        out.add({
          code: 'invalid_type',
          message: `targetAgents[${i}] must be a non-empty string`,
          path: ['targetAgents', i],
        });
      }
    });
  }

  const rules: NplRule[] = [];
  const asts: NplConditionAst[] = [];
  const rulesValue = data.rules;
  if (rulesValue === undefined) {
    out.add({ code: 'missing_field', message: 'rules is required', path: [] });
  } else if (!Array.isArray(rulesValue)) {
    out.add({
      code: 'invalid_type',
      message: `rules must be a list, not ${typeName(rulesValue)}`,
      path: ['rules'],
    });
  } else if (rulesValue.length === 0) {
    out.add({ code: 'empty_list', message: 'rules must not be empty', path: ['rules'] });
  } else {
    const firstIndexOfId = new Map<string, number>();
    rulesValue.forEach((rule: unknown, i) => {
      const path = ['rules', i];
      if (!isRecord(rule)) {
        out.add({
          code: 'invalid_type',
          message: `a rule must be an object, not ${typeName(rule)}`,
          path,
        });
        return;
      }
      checkUnknownFields(out, rule, RULE_FIELDS, path);
      const ruleId = checkString(out, rule, 'ruleId', path, true);
      if (ruleId === '') {
        out.add({
          code: 'invalid_value',
          message: 'ruleId must not be empty',
          path: [...path, 'ruleId'],
        });
      } else if (ruleId !== undefined) {
        const first = firstIndexOfId.get(ruleId);
        if (first === undefined) firstIndexOfId.set(ruleId, i);
        else {
          out.add({
            code: 'duplicate_rule_id',
            message: `ruleId ${JSON.stringify(ruleId)} is already used by rules[${first}]`,
            path: [...path, 'ruleId'],
            hint: 'every rule needs its own ruleId',
          });
        }
      }
      const action = checkEnum<NplAction>(out, rule, 'action', NPL_ACTIONS, path);
      const alertSeverity = checkEnum<NplSeverity>(
        out,
        rule,
        'alertSeverity',
        NPL_SEVERITIES,
        path,
      );
      const condition = checkString(out, rule, 'condition', path, true);
      let ast: NplConditionAst | undefined;
      if (condition === '') {
        out.add({
          code: 'invalid_value',
          message: 'condition must not be empty',
          path: [...path, 'condition'],
        });
      } else if (condition !== undefined) {
        const parsed = parseCondition(condition);
        if (parsed.ok) ast = parsed.ast;
        else {
          for (const problem of parsed.problems) {
            const issue = toConditionIssue(condition, problem, {
              path: [...path, 'condition'],
              ruleIndex: i,
            });
            out.add(issue, problem.offset);
          }
        }
      }
      if (ruleId && action && alertSeverity && condition !== undefined && ast) {
        rules.push(Object.freeze({ ruleId, action, condition, alertSeverity }));
        asts.push(ast);
      }
    });
  }
  if (out.issues.length > 0) return out.issues;
  for (let i = 0; i < rules.length; i++) ruleAsts.set(rules[i]!, asts[i]!);
  const policy: NplPolicy = Object.freeze({
    version: version!,
    policyName: policyName!,
    ...(description === undefined ? {} : { description }),
    targetAgents: Object.freeze(targetAgents),
    rules: Object.freeze(rules),
  });
  parsedPolicies.add(policy);
  return policy;
}

/** Validates a policy document; returns every problem at once instead of throwing. */
export function safeParsePolicy(source: string | object): SafeParsePolicyResult {
  let result: NplPolicy | NplIssue[];
  if (typeof source === 'string') {
    const located = fromText(source);
    result = Array.isArray(located) ? located : validate(located.data, located);
  } else {
    result = validate(source, undefined);
  }
  if (Array.isArray(result)) {
    return { success: false, error: new NplError('NPL_INVALID_DOCUMENT', result) };
  }
  return { success: true, policy: result };
}

/** Validates a policy document (YAML/JSON text or object); throws NplError NPL_INVALID_DOCUMENT. */
export function parsePolicy(source: string | object): NplPolicy {
  const result = safeParsePolicy(source);
  if (!result.success) throw result.error;
  return result.policy;
}
