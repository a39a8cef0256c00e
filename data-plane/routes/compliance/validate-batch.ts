// The pure work of POST /api/v1/public/compliance/validate/batch: parse each item's policy (or
// resolve its pin among the bundled reference policies), charge the batch's evaluation work
// against the budget, then evaluate every tool call. No I/O, no clock, no tenant data: the same
// batch always gives the same answer. An invalid item never fails the batch; only exceeding the
// work budget does (413 COMPLIANCE_BATCH_LIMIT_EXCEEDED), before any call is evaluated.
import { GatewayError } from '../../../shared/errors/index.js';
import {
  BUNDLED_POLICIES,
  type CompiledPolicy,
  compilePolicy,
  evaluatePolicy,
  failClosedPolicy,
  formatIssuePath,
  InMemoryNplRegistry,
  type NplError,
  type NplErrorCode,
  type NplIssue,
  parsePolicy,
  safeParsePolicy,
} from '../../../shared/npl/index.js';
import { estimateTextNesting } from '../../../shared/npl/text-nesting.js';
import { type BatchItem, type ComplianceBatch, toolCallContext } from './envelope.js';
import type { ComplianceLimits } from './limits.js';
import { callWork, type PolicyCost, policyCost } from './work.js';

export interface ItemError {
  readonly code: string;
  readonly message: string;
  /** JSON path inside the policy document (`rules[1].condition`), `$` for the whole document. */
  readonly path: string;
  readonly hint?: string;
  readonly ruleIndex?: number;
  /** 1-based line and column inside the condition text (condition errors). */
  readonly line?: number;
  readonly column?: number;
  /** The condition line with a caret under the column. */
  readonly excerpt?: string;
  /** 1-based line and column in the policy text (when the policy was sent as text). */
  readonly source?: { readonly line: number; readonly column: number };
}

export interface ItemDecision {
  readonly tool: string;
  readonly action: string;
  readonly ruleId: string;
  readonly matched: boolean;
  readonly reason: string;
  readonly alertSeverity: string;
}

export interface ItemResult {
  readonly index: number;
  readonly id?: string;
  readonly valid: boolean;
  /** The NPL error code when the item is not valid. */
  readonly error?: NplErrorCode;
  readonly policyName?: string;
  readonly policyVersion?: string;
  readonly policyUri?: string;
  readonly contentHash?: string;
  readonly errors: readonly ItemError[];
  readonly decisions: readonly ItemDecision[];
}

export interface BatchResult {
  readonly valid: boolean;
  readonly items: readonly ItemResult[];
  /** Evaluation work units this batch cost (see work.ts). */
  readonly work: number;
  readonly limits: ComplianceLimits;
}

interface Resolved {
  readonly item: BatchItem;
  /** The policy to evaluate the calls with; null when the calls are not evaluated. */
  readonly compiled: CompiledPolicy | null;
  readonly cost: PolicyCost;
  readonly error?: NplErrorCode;
  readonly issues: readonly NplIssue[];
}

const FREE: PolicyCost = { perCall: 0, perByte: 0 };

function toItemError(issue: NplIssue): ItemError {
  return {
    code: issue.code,
    message: issue.message,
    path: formatIssuePath(issue.path),
    hint: issue.hint,
    ruleIndex: issue.ruleIndex,
    line: issue.line,
    column: issue.column,
    excerpt: issue.excerpt,
    source: issue.source,
  };
}

export type BatchValidator = (batch: ComplianceBatch) => BatchResult | GatewayError;

/** Builds the validator once: the bundled policies are parsed and compiled here, not per request. */
export function createBatchValidator(limits: ComplianceLimits): BatchValidator {
  const registry = new InMemoryNplRegistry({ policies: BUNDLED_POLICIES });
  const bundled = new Map<string, { compiled: CompiledPolicy; cost: PolicyCost }>();
  for (const source of BUNDLED_POLICIES) {
    const policy = parsePolicy(source);
    const compiled = compilePolicy(policy);
    bundled.set(compiled.uri, { compiled, cost: policyCost(policy) });
  }

  function resolvePin(item: BatchItem, uri: string): Resolved {
    try {
      const entry = registry.resolveNow(uri);
      const found = bundled.get(entry.uri);
      if (found) return { item, ...found, issues: [] };
      throw new Error(`bundled policy ${entry.uri} was not compiled`);
    } catch (error) {
      const nplError = error as NplError;
      // Fail closed, as enforcement does for a pin it cannot resolve.
      return {
        item,
        compiled: failClosedPolicy(uri, `${nplError.code}: ${nplError.message}`),
        cost: FREE,
        error: nplError.code,
        issues: nplError.issues,
      };
    }
  }

  function resolveInline(item: BatchItem, source: string | object): Resolved {
    if (typeof source === 'string') {
      const nesting = estimateTextNesting(source, limits.maxPolicyTextNesting);
      if (nesting > limits.maxPolicyTextNesting) {
        const message = `the policy text nests deeper than ${limits.maxPolicyTextNesting} levels (flow brackets, indentation and block indicators)`;
        const issue: NplIssue = { code: 'limit_exceeded', message, path: [] };
        return { item, compiled: null, cost: FREE, error: 'NPL_INVALID_DOCUMENT', issues: [issue] };
      }
    }
    const parsed = safeParsePolicy(source);
    if (!parsed.success) {
      return {
        item,
        compiled: null,
        cost: FREE,
        error: parsed.error.code,
        issues: parsed.error.issues,
      };
    }
    return {
      item,
      compiled: compilePolicy(parsed.policy),
      cost: policyCost(parsed.policy),
      issues: [],
    };
  }

  return (batch) => {
    const resolved = batch.items.map((item) =>
      item.policyUri !== undefined
        ? resolvePin(item, item.policyUri)
        : resolveInline(item, item.policy as string | object),
    );

    let work = 0;
    for (const r of resolved) {
      if (r.compiled === null || r.cost === FREE) continue;
      for (const call of r.item.toolCalls) {
        work += callWork(r.cost, JSON.stringify(call).length);
      }
    }
    if (work > limits.maxWork) {
      return new GatewayError(
        'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
        `evaluation work: ${work} exceeds the limit of ${limits.maxWork} (maxWork); send fewer tool calls per large policy`,
        { details: { limit: 'maxWork', max: limits.maxWork, actual: work } },
      );
    }

    let allValid = true;
    const items = resolved.map((r, index): ItemResult => {
      const { item, compiled } = r;
      const valid = r.error === undefined;
      if (!valid) allValid = false;
      const decisions: ItemDecision[] = [];
      if (compiled !== null) {
        for (const call of item.toolCalls) {
          const d = evaluatePolicy(compiled, toolCallContext(call));
          decisions.push({
            tool: call.tool,
            action: d.action,
            ruleId: d.ruleId,
            matched: d.matched,
            reason: d.reason,
            alertSeverity: d.alertSeverity,
          });
        }
      }
      const policy = valid ? compiled?.policy : undefined;
      return {
        index,
        id: item.id,
        valid,
        error: r.error,
        policyName: policy?.policyName,
        policyVersion: policy?.version,
        policyUri: policy ? compiled?.uri : item.policyUri,
        contentHash: policy ? compiled?.contentHash : undefined,
        errors: r.issues.map(toItemError),
        decisions,
      };
    });
    return { valid: allValid, items, work, limits };
  };
}
