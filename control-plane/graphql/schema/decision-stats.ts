// decisionStats: the tenant's allowed, denied and held calls over the last minutes, as the data
// planes counted them (not the audit trail: allows are not audited). Counts reach decision_counts
// from each data plane's tally (the in-process one of `start` on a timer, remote ones with each
// config-stream heartbeat); a process that holds an in-process tally flushes it first
// (`flushDecisionStats`), so a query sees every decision this process made before it.
//
// `deny` counts every refusal. Client errors (a malformed request: CLIENT_ERROR_CODES) are denies
// too, and are also counted apart in `clientErrors`, so a reader tells policy denies from broken
// clients; the outcome counts kept their meaning when that field was added.
import { z } from 'zod';
import {
  CLIENT_ERROR_STATUSES,
  DECISION_OUTCOMES,
} from '../../../shared/decisions/decision-counts.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { readDecisionCounts } from '../../../storage/tables/decision-counts.js';
import { builder } from '../builder.js';

/** GraphQL Int's largest value: a sum over a day could outgrow it. */
const INT_MAX = 2_147_483_647;

/** The window decisionStats accepts, in minutes. */
export const DECISION_WINDOW_MINUTES = { min: 1, max: 1440, default: 60 } as const;

interface OutcomeCount {
  readonly outcome: string;
  readonly count: number;
}
interface DecisionMinute {
  readonly minute: Date;
  readonly counts: readonly OutcomeCount[];
  readonly clientErrors: number;
}
interface ToolCount {
  readonly serverId: string;
  readonly toolName: string;
  readonly count: number;
}
interface ReasonCount {
  readonly reasonCode: string;
  readonly count: number;
}
interface Reporter {
  readonly dataPlaneId: string | null;
  readonly name: string;
  readonly lastReportedAt: Date;
}
interface DecisionStats {
  readonly windowMinutes: number;
  readonly since: Date;
  readonly perMinute: readonly DecisionMinute[];
  readonly totals: readonly OutcomeCount[];
  readonly clientErrors: number;
  readonly topDeniedTools: readonly ToolCount[];
  readonly topReasonCodes: readonly ReasonCount[];
  readonly reporters: readonly Reporter[];
}

const OutcomeCountRef = builder.objectRef<OutcomeCount>('DecisionOutcomeCount').implement({
  description: 'How many decisions had one outcome.',
  fields: (t) => ({
    outcome: t.exposeString('outcome', {
      description: `The decision: ${DECISION_OUTCOMES.join(', ')}.`,
    }),
    count: t.exposeInt('count', { description: 'How many.' }),
  }),
});

const DecisionMinuteRef = builder.objectRef<DecisionMinute>('DecisionMinute').implement({
  description: 'The decisions of one minute.',
  fields: (t) => ({
    minute: t.expose('minute', { type: 'DateTime', description: "The minute's start." }),
    counts: t.field({
      type: [OutcomeCountRef],
      description: 'Per outcome, only outcomes that occurred (deny includes client errors).',
      resolve: (minute) => minute.counts,
    }),
    clientErrors: t.exposeInt('clientErrors', {
      description: "Of this minute's denies, the client errors (see DecisionStats.clientErrors).",
    }),
  }),
});

const ToolCountRef = builder.objectRef<ToolCount>('DecisionToolCount').implement({
  description: 'How many calls of one tool were denied.',
  fields: (t) => ({
    serverId: t.exposeString('serverId', {
      description: 'The MCP server (empty when `toolName` is `(other)`).',
    }),
    toolName: t.exposeString('toolName', {
      description: 'The tool; `(other)` gathers tools past a data plane per-minute cap.',
    }),
    count: t.exposeInt('count', { description: 'Denied calls.' }),
  }),
});

const ReasonCountRef = builder.objectRef<ReasonCount>('DecisionReasonCount').implement({
  description: 'How many denies and holds had one reason code.',
  fields: (t) => ({
    reasonCode: t.exposeString('reasonCode', {
      description: 'A registry code (docs/errors.md), e.g. NPL_POLICY_DENIED.',
    }),
    count: t.exposeInt('count', { description: 'Denied and held calls with it.' }),
  }),
});

const ReporterRef = builder.objectRef<Reporter>('DecisionReporter').implement({
  description: 'A data plane that reported decisions of the tenant in the window.',
  fields: (t) => ({
    dataPlaneId: t.exposeID('dataPlaneId', {
      nullable: true,
      description: 'The DataPlane.id; null for the in-process data plane of `agent-gateway start`.',
    }),
    name: t.exposeString('name', {
      description: "The data plane's registered name, or the process name of an in-process one.",
    }),
    lastReportedAt: t.expose('lastReportedAt', {
      type: 'DateTime',
      description: 'When its last report of the window was written.',
    }),
  }),
});

const DecisionStatsRef = builder.objectRef<DecisionStats>('DecisionStats').implement({
  description:
    "The tenant's decisions over a window, as every data plane counted them (allows included).",
  fields: (t) => ({
    windowMinutes: t.exposeInt('windowMinutes', { description: 'The window asked for.' }),
    since: t.expose('since', {
      type: 'DateTime',
      description: 'Start of the window: the first minute counted (the current one is last).',
    }),
    perMinute: t.field({
      type: [DecisionMinuteRef],
      description: 'Oldest first, one row per minute that has any decision.',
      resolve: (stats) => stats.perMinute,
    }),
    totals: t.field({
      type: [OutcomeCountRef],
      description: `Per outcome over the window: ${DECISION_OUTCOMES.join(', ')} (0 when none), in that order. deny counts every refusal, client errors included.`,
      resolve: (stats) => stats.totals,
    }),
    clientErrors: t.exposeInt('clientErrors', {
      description:
        'Of the denies over the window, the client errors: refusals of a malformed request ' +
        '(a body that is not an inspect request or JSON-RPC message, too large, of another ' +
        'media type): denies whose reason code has the registry status ' +
        `${[...CLIENT_ERROR_STATUSES].join(', ')} (docs/errors.md), such as MCP_MALFORMED_RPC ` +
        'and REQUEST_INVALID; MCP_TOKEN_PASSTHROUGH, a security refusal, stays a policy deny. ' +
        'deny minus clientErrors is the policy denies.',
    }),
    topDeniedTools: t.field({
      type: [ToolCountRef],
      description: 'The most denied tools, at most 10, count descending.',
      resolve: (stats) => stats.topDeniedTools,
    }),
    topReasonCodes: t.field({
      type: [ReasonCountRef],
      description: 'The commonest reason codes of denies and holds, at most 10, count descending.',
      resolve: (stats) => stats.topReasonCodes,
    }),
    reporters: t.field({
      type: [ReporterRef],
      description: 'The data planes that reported in the window and when last.',
      resolve: (stats) => stats.reporters,
    }),
  }),
});

builder.queryField('decisionStats', (t) =>
  t.field({
    type: DecisionStatsRef,
    description:
      "The tenant's decisions over the last `windowMinutes` minutes (the current one included), " +
      'counted by the data planes: per minute, per outcome, the most denied tools and the ' +
      'commonest reason codes. Counts reach the control plane every 5 s from the in-process ' +
      'data plane (at once before this query) and with each config-stream heartbeat from a ' +
      'remote one.',
    authScopes: { scope: SCOPES.AUDIT_READ },
    args: {
      windowMinutes: t.arg.int({
        defaultValue: DECISION_WINDOW_MINUTES.default,
        description: `Minutes, ${DECISION_WINDOW_MINUTES.min}-${DECISION_WINDOW_MINUTES.max}. Default ${DECISION_WINDOW_MINUTES.default}.`,
        validate: z
          .int()
          .min(DECISION_WINDOW_MINUTES.min)
          .max(DECISION_WINDOW_MINUTES.max)
          .nullish(),
      }),
    },
    resolve: async (_root, args, context) => {
      await context.flushDecisionStats?.();
      const windowMinutes = args.windowMinutes ?? DECISION_WINDOW_MINUTES.default;
      const now = Date.now();
      const since = new Date(now - (now % 60_000) - (windowMinutes - 1) * 60_000);
      const counts = await readDecisionCounts(context.db, context.caller.tenantId, since);
      return {
        windowMinutes,
        since,
        ...aggregate(counts.perMinute),
        topDeniedTools: counts.topDeniedTools,
        topReasonCodes: counts.topReasonCodes,
        reporters: counts.reporters,
      };
    },
  }),
);

/** Rows per (minute, outcome), ordered by minute, as minutes and totals. */
function aggregate(
  rows: readonly { minute: Date; outcome: string; count: number; clientErrors: number }[],
): {
  perMinute: DecisionMinute[];
  totals: OutcomeCount[];
  clientErrors: number;
} {
  const perMinute: { minute: Date; counts: OutcomeCount[]; clientErrors: number }[] = [];
  const totals = new Map<string, number>();
  let clientErrors = 0;
  for (const row of rows) {
    let last = perMinute.at(-1);
    if (!last || last.minute.getTime() !== row.minute.getTime()) {
      last = { minute: row.minute, counts: [], clientErrors: 0 };
      perMinute.push(last);
    }
    last.counts.push({ outcome: row.outcome, count: row.count });
    last.clientErrors = Math.min(last.clientErrors + row.clientErrors, INT_MAX);
    clientErrors += row.clientErrors;
    totals.set(row.outcome, (totals.get(row.outcome) ?? 0) + row.count);
  }
  for (const outcome of DECISION_OUTCOMES) if (!totals.has(outcome)) totals.set(outcome, 0);
  const order = (outcome: string) => {
    const at = (DECISION_OUTCOMES as readonly string[]).indexOf(outcome);
    return at < 0 ? DECISION_OUTCOMES.length : at;
  };
  return {
    perMinute,
    clientErrors: Math.min(clientErrors, INT_MAX),
    totals: [...totals]
      .map(([outcome, count]) => ({ outcome, count: Math.min(count, INT_MAX) }))
      .sort((a, b) => order(a.outcome) - order(b.outcome)),
  };
}
