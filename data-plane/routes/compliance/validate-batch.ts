// The pure work of POST /api/v1/public/compliance/validate/batch: parse each item's policy (or
// resolve its pin among the bundled reference policies), charge the batch's evaluation work
// against the budget, then evaluate every tool call. No I/O, no clock, no tenant data: the same
// batch always gives the same answer. An invalid item never fails the batch; only exceeding the
// work budget does (413 COMPLIANCE_BATCH_LIMIT_EXCEEDED), before any call is evaluated.
import { type GatewayError, gatewayError } from '../../../shared/errors/index.js';
import {
  BUNDLED_POLICIES,
  buildFailClosedPolicy,
  type CompiledPolicy,
  compilePolicy,
  evaluatePolicy,
  formatIssuePath,
  InMemoryNplRegistry,
  type NplContext,
  type NplError,
  type NplErrorCode,
  type NplIssue,
  parsePolicy,
  safeParsePolicy,
} from '../../../shared/npl/index.js';
import { estimateTextNesting } from '../../../shared/npl/text-nesting.js';
import type { BatchResult, ItemDecision, ItemError, ItemResult } from './batch-answer.js';
import type { BatchItem, BatchToolCall, ComplianceBatch } from './batch-body.js';
import type { ComplianceLimits } from './limits.js';
import { estimateCallWork, estimatePolicyCost, type PolicyCost } from './work.js';

interface Resolved {
  readonly item: BatchItem;
  /** The policy to evaluate the calls with; null when the calls are not evaluated. */
  readonly compiled: CompiledPolicy | null;
  readonly cost: PolicyCost;
  readonly error?: NplErrorCode;
  readonly issues: readonly NplIssue[];
  readonly warnings: readonly NplIssue[];
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

/** The NPL evaluation context of one tool call. */
function toolCallContext(call: BatchToolCall): NplContext {
  const ctx: Record<string, unknown> = { ...call.context };
  ctx.tool = { name: call.tool, args: call.args };
  ctx.args = call.args;
  if (call.agentRole !== undefined) ctx.agentRole = call.agentRole;
  if (call.usage !== undefined) ctx.usage = call.usage;
  return ctx as NplContext;
}

export type BatchValidator = (batch: ComplianceBatch) => BatchResult | GatewayError;

/** Builds the validator once: the bundled policies are parsed and compiled here, not per request. */
export function createBatchValidator(limits: ComplianceLimits): BatchValidator {
  const registry = new InMemoryNplRegistry({ policies: BUNDLED_POLICIES });
  const bundled = new Map<string, { compiled: CompiledPolicy; cost: PolicyCost }>();
  for (const source of BUNDLED_POLICIES) {
    const policy = parsePolicy(source);
    const compiled = compilePolicy(policy);
    bundled.set(compiled.uri, { compiled, cost: estimatePolicyCost(policy) });
  }

  const bundledUris = [...bundled.keys()].join(', ');

  function resolvePin(item: BatchItem, uri: string): Resolved {
    try {
      const entry = registry.resolveNow(uri);
      const found = bundled.get(entry.uri);
      if (found) return { item, ...found, issues: [], warnings: [] };
      throw new Error(`bundled policy ${entry.uri} was not compiled`);
    } catch (error) {
      const nplError = error as NplError;
      // The registry's own words ("no policy is published as …") would contradict a user who
      // has just published that version: this endpoint never sees a tenant's registry.
      const issues =
        nplError.code === 'NPL_REGISTRY_NOT_FOUND'
          ? nplError.issues.map((issue) => ({
              ...issue,
              message: `${uri} is not a bundled policy: this public endpoint reads no tenant data, so it resolves only the bundled reference policies (${bundledUris}), not the versions a tenant publishes`,
              hint: 'send the document inline as `policy` (a published version\'s text is nplPolicyVersion.source in GraphQL); docs/compliance-batch.md, "Pins"',
            }))
          : nplError.issues;
      const reason = issues[0]?.message ?? nplError.message;
      // Fail closed, as enforcement does for a pin it cannot resolve.
      return {
        item,
        compiled: buildFailClosedPolicy(uri, `${nplError.code}: ${reason}`),
        cost: FREE,
        error: nplError.code,
        issues,
        warnings: [],
      };
    }
  }

  function resolveInline(item: BatchItem, source: string | object): Resolved {
    if (typeof source === 'string') {
      const nesting = estimateTextNesting(source, limits.maxPolicyTextNesting);
      if (nesting > limits.maxPolicyTextNesting) {
        const message = `the policy text nests deeper than ${limits.maxPolicyTextNesting} levels (flow brackets, indentation and block indicators)`;
        const issue: NplIssue = { code: 'limit_exceeded', message, path: [] };
        return {
          item,
          compiled: null,
          cost: FREE,
          error: 'NPL_INVALID_DOCUMENT',
          issues: [issue],
          warnings: [],
        };
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
        warnings: parsed.warnings,
      };
    }
    return {
      item,
      compiled: compilePolicy(parsed.policy),
      cost: estimatePolicyCost(parsed.policy),
      issues: [],
      warnings: parsed.warnings,
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
        work += estimateCallWork(r.cost, JSON.stringify(call).length);
      }
    }
    if (work > limits.maxWork) {
      const limit = 'maxWork';
      return gatewayError(
        'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
        { subject: 'evaluation work', actual: work, max: limits.maxWork, limit },
        { details: { limit, max: limits.maxWork, actual: work } },
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
        warnings: r.warnings.map(toItemError),
        decisions,
      };
    });
    return { valid: allValid, items, work, limits };
  };
}
