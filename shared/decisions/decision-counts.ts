// Decision counts: how many calls each data plane allowed, denied and held, per tenant and minute.
// The data planes count them themselves (allows are not audited) and report them; the control
// plane stores and aggregates them (decisionStats). Pure module: the shape both planes share.

/** The pipeline's closed set of decisions (data-plane/governance/answers.ts `Decision`). */
export const DECISION_OUTCOMES = ['allow', 'deny', 'require_human_approval'] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

/** The toolName that collects a tenant-minute's denied tools past the reporter's cap. */
export const OTHER_TOOL = '(other)';

/** Longest serverId or toolName kept (a denied call's names are whatever the caller sent). */
export const MAX_DECISION_NAME_LENGTH = 200;
/** Rows one report may carry (the ack endpoint refuses more). */
export const MAX_DECISION_REPORT_ROWS = 10_000;
/** Counts older than this are dropped by reporters and pruned by writers. */
export const DECISION_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * One counter: every decision is counted in exactly one row. Allows: empty serverId, toolName
 * and reasonCode. Holds: their reasonCode. Denies: their serverId, toolName and reasonCode.
 */
export interface DecisionCountRow {
  readonly tenantId: string;
  /** The minute's start, in epoch milliseconds (a multiple of 60000). */
  readonly minute: number;
  readonly outcome: DecisionOutcome;
  readonly serverId: string;
  readonly toolName: string;
  readonly reasonCode: string;
  readonly count: number;
}
