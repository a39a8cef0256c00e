// Decision counts: how many calls each data plane allowed, denied and held, per tenant and minute.
// The data planes count them themselves (allows are not audited) and report them; the control
// plane stores and aggregates them (decisionStats). Pure module: the shape both planes share,
// and which denies count as client errors (read from the reason code when counts are read, so
// the stored rows need no category and old rows are split too).
import { ERROR_CODES, type ErrorCode } from '../errors/index.js';

/** The pipeline's closed set of decisions (data-plane/governance/answers.ts `Decision`). */
export const DECISION_OUTCOMES = ['allow', 'deny', 'require_human_approval'] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

/**
 * HTTP statuses of a refusal of the request itself rather than of what it asks for: a body that
 * is not an inspect request or JSON-RPC message (400), too large (413), of another media type
 * (415). The overview shows these denies as client errors, apart from policy denies.
 */
export const CLIENT_ERROR_STATUSES: ReadonlySet<number> = new Set([400, 413, 415]);

/**
 * 400s that refuse a well-formed call for security, so they stay policy denies: a bearer token
 * meant for the MCP server presented to the gateway (spec §4.3's token passthrough).
 */
const SECURITY_REFUSALS: ReadonlySet<ErrorCode> = new Set(['MCP_TOKEN_PASSTHROUGH']);

/**
 * The reason codes whose denies are client errors (malformed requests), from the registry's
 * statuses: MCP_MALFORMED_RPC, REQUEST_INVALID, MCP_META_TOO_LARGE and the like.
 */
export const CLIENT_ERROR_CODES: readonly ErrorCode[] = Object.freeze(
  (Object.keys(ERROR_CODES) as ErrorCode[])
    .filter((code) => {
      const status = ERROR_CODES[code].status;
      return status !== null && CLIENT_ERROR_STATUSES.has(status) && !SECURITY_REFUSALS.has(code);
    })
    .sort(),
);

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
