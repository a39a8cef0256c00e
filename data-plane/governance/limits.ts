// The usage-limit step (docs/limits.md; DESIGN.md §4's table): after NPL, a call NPL allowed is
// reserved in every limit it matches, atomically per limit (data-plane/limits/usage-limiter.ts).
// A refusal under a DENY limit answers 429 RATE_LIMIT_EXCEEDED or BUDGET_EXCEEDED with the
// `limit` object, audited before the answer; a REQUIRE_HUMAN limit holds the call like an NPL
// hold, and the approved resubmission passes and counts whatever it exceeds. A budget's amount
// that is missing, not a JSON number or negative is refused 400 BUDGET_ARGUMENT_INVALID and
// counted nowhere; a counter the data plane cannot reach refuses 503 LIMIT_COUNTER_UNAVAILABLE
// (fail closed). A reservation is kept when the upstream then fails: the call was made.
import { formatErrorMessage } from '../../shared/errors/index.js';
import type { NplContext } from '../../shared/npl/index.js';
import type { CompiledLimit } from '../limits/compiled-limits.js';
import { USAGE_ROOT } from '../limits/usage-context.js';
import type { LimitHit } from '../limits/usage-limiter.js';
import type { CompiledTenant } from '../store/compiled-snapshot.js';
import { type AllowOutcome, answerAllow } from './allow.js';
import { answerDeny } from './deny.js';
import type { InspectDependencies } from './dependencies.js';
import type { AgentExchange } from './exchange.js';
import { type Hold, holdOrRelease } from './hold.js';
import { limitBlock, limitCallOf } from './limit-checks.js';
import type { InspectRequest } from './request.js';

/**
 * The usage context NPL evaluates with, when the call meets limits and a policy it is evaluated
 * under reads `usage` (a database read for budgets); undefined otherwise.
 */
export async function usageContextOf(
  deps: InspectDependencies,
  tenant: CompiledTenant,
  call: InspectRequest,
  limits: readonly CompiledLimit[],
): Promise<NplContext['usage']> {
  if (limits.length === 0) return undefined;
  const named = call.policy === undefined ? undefined : tenant.policiesByUri.get(call.policy);
  if (!tenant.pinnedReadUsage && named?.pathRoots.has(USAGE_ROOT) !== true) return undefined;
  return deps.usage.view(limitCallOf(tenant, call), limits);
}

/** An allowed call under limits: reserved, then answered as allowed, refused or held. */
export async function answerWithinLimits(
  deps: InspectDependencies,
  exchange: AgentExchange,
  outcome: AllowOutcome,
  limits: readonly CompiledLimit[],
): Promise<void> {
  const check = await deps.usage.reserve(limitCallOf(exchange.tenant, exchange.call), limits);
  if (check.ok) return answerAllow(deps, exchange, outcome, null);
  if (check.reason === 'exceeded' && check.limit.limit.action === 'REQUIRE_HUMAN') {
    deps.metrics.limitHits.inc({ limit_id: check.hit.limitId, action: 'REQUIRE_HUMAN' });
    return holdOrRelease(deps, exchange, limitHold(check.hit, check.kind, limits));
  }
  if (check.reason === 'exceeded') {
    deps.metrics.limitHits.inc({ limit_id: check.hit.limitId, action: 'DENY' });
  }
  return answerDeny(deps, exchange, limitBlock(check));
}

function limitHold(hit: LimitHit, kind: 'calls' | 'sum', limits: readonly CompiledLimit[]): Hold {
  return {
    code: 'LIMIT_REQUIRE_HUMAN',
    message: formatErrorMessage('LIMIT_REQUIRE_HUMAN', {
      what: kind === 'calls' ? 'limit' : 'budget',
      limitId: hit.limitId,
      used: hit.used,
      max: hit.max,
    }),
    limit: hit,
    limits,
  };
}
