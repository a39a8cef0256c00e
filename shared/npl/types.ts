// Public data shapes of NPL: documents, evaluation contexts and decisions.

export const NPL_ACTIONS = ['ALLOW', 'BLOCK', 'REQUIRE_HUMAN', 'SIMULATE'] as const;
export type NplAction = (typeof NPL_ACTIONS)[number];

export const NPL_SEVERITIES = ['LOW', 'MEDIUM', 'CRITICAL'] as const;
export type NplSeverity = (typeof NPL_SEVERITIES)[number];

/** How restrictive an action is when several policies decide: higher wins. */
export const NPL_ACTION_RANK: Readonly<Record<NplAction, number>> = {
  ALLOW: 0,
  SIMULATE: 1,
  REQUIRE_HUMAN: 2,
  BLOCK: 3,
};

export const NPL_RULE_IDS = {
  defaultAllow: 'npl_default_allow',
  agentNotInScope: 'npl_agent_not_in_scope',
  registryFailClosed: 'NPL_REGISTRY_FAIL_CLOSED',
  evaluationError: 'npl_evaluation_error',
} as const;

export interface NplRule {
  readonly ruleId: string;
  readonly action: NplAction;
  readonly condition: string;
  readonly alertSeverity: NplSeverity;
}

/** A validated NPL document (deeply frozen when it comes from `parsePolicy`). */
export interface NplPolicy {
  readonly version: string;
  readonly policyName: string;
  readonly description?: string;
  readonly targetAgents: readonly string[];
  readonly rules: readonly NplRule[];
}

/**
 * What a condition can see. Any JSON value is accepted at run time: a field of the wrong type
 * simply does not match. `payload` is kept for conditions written for the reference evaluator.
 */
export interface NplContext {
  readonly tool?: { readonly name?: string; readonly args?: Readonly<Record<string, unknown>> };
  readonly args?: Readonly<Record<string, unknown>>;
  readonly agentRole?: string;
  readonly agent?: Readonly<Record<string, unknown>>;
  readonly server?: Readonly<Record<string, unknown>>;
  readonly method?: string;
  readonly tenant?: Readonly<Record<string, unknown>>;
  readonly mode?: string;
  /**
   * The verified identity's delegation: `depth` (0 for a root credential or no identity) and
   * `chain`, the agent ids from the root holder to the caller ([] without identity).
   */
  readonly delegation?: {
    readonly depth?: number;
    readonly chain?: readonly string[];
  };
  /**
   * Per usage limit the call matches (by limitId): `calls` and `sum` counted in the window before
   * this call, `callsAfter` and `sumAfter` with it (`sum*` for budgets only); docs/limits.md.
   */
  readonly usage?: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly payload?: string;
}

/**
 * The outcome of evaluating one or several policies. Decisions are shared, frozen objects
 * computed when a policy is compiled: callers must not mutate them (copy first).
 */
export interface NplDecision {
  readonly matched: boolean;
  readonly action: NplAction;
  readonly ruleId: string;
  readonly reason: string;
  readonly alertSeverity: NplSeverity;
  readonly policyName: string;
  readonly policyVersion: string;
  readonly policyUri: string;
}
