// Usage limits (docs/limits.md): call-count limits and budgets (sums of one argument) over fixed
// windows, part of the tenant's gateway policy. This module holds their one definition: the zod
// rule the gateway policy's `limits` field is written with (bounds, the messages an operator
// reads, and the checks across fields: a limit needs maxCalls or a budget, a budget needs both
// sumArgument and maxSum, limitIds are unique), and the types the rest of the gateway reads.
// Pure besides zod: the console imports it.
import { z } from 'zod';

export const LIMIT_SUBJECTS = ['AGENT', 'AGENT_TOOL', 'TENANT'] as const;
/** Whose calls a limit counts together: one agent's, one agent's on one tool, or the tenant's. */
export type LimitSubject = (typeof LIMIT_SUBJECTS)[number];

export const LIMIT_ACTIONS = ['DENY', 'REQUIRE_HUMAN'] as const;
/** What a call that would exceed the limit meets. */
export type LimitAction = (typeof LIMIT_ACTIONS)[number];

export const MAX_LIMITS_PER_TENANT = 64;
export const MAX_WINDOW_SECONDS = 2_592_000;
export const MAX_LIMIT_CALLS = 1_000_000_000;
/** Budgets are stored as PostgreSQL numeric; this bound keeps a sum far inside exact doubles. */
export const MAX_LIMIT_SUM = 1e15;
const MAX_PATTERNS = 100;
const PATTERN_MAX = 256;

export const LIMIT_ID_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
/** A dotted path of identifiers into the call's arguments: `amount`, `payment.total`. */
export const SUM_ARGUMENT_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,15}$/;

export interface UsageLimit {
  readonly limitId: string;
  readonly per: LimitSubject;
  /** Tool-name globs of tools/call it applies to; empty: every tool. */
  readonly tools: readonly string[];
  /** Server ids it applies to; empty: every server. */
  readonly servers: readonly string[];
  readonly windowSeconds: number;
  readonly maxCalls: number | null;
  readonly sumArgument: string | null;
  readonly maxSum: number | null;
  readonly action: LimitAction;
}

function patternList(what: string) {
  const itemMessage = `must be a ${what} of 1-${PATTERN_MAX} characters`;
  const listMessage = `must be a list of at most ${MAX_PATTERNS} ${what}s`;
  return z
    .array(
      z
        .string({ error: itemMessage })
        .min(1, { error: itemMessage, abort: true })
        .max(PATTERN_MAX, itemMessage),
      { error: listMessage },
    )
    .max(MAX_PATTERNS, listMessage);
}

const limitRule = z
  .object(
    {
      limitId: z
        .string({ error: 'must be a string' })
        .regex(LIMIT_ID_PATTERN, 'must match ^[a-z][a-z0-9_]{0,62}$ (e.g. daily_payments)'),
      per: z.enum(LIMIT_SUBJECTS, { error: `must be one of ${LIMIT_SUBJECTS.join(', ')}` }),
      tools: patternList('tool name or * glob').default(() => []),
      servers: patternList('server id').default(() => []),
      windowSeconds: z
        .int({ error: `must be an integer from 1 to ${MAX_WINDOW_SECONDS}` })
        .min(1, `must be an integer from 1 to ${MAX_WINDOW_SECONDS}`)
        .max(MAX_WINDOW_SECONDS, `must be an integer from 1 to ${MAX_WINDOW_SECONDS}`),
      maxCalls: z
        .int({ error: `must be an integer from 1 to ${MAX_LIMIT_CALLS} or null` })
        .min(1, `must be an integer from 1 to ${MAX_LIMIT_CALLS} or null`)
        .max(MAX_LIMIT_CALLS, `must be an integer from 1 to ${MAX_LIMIT_CALLS} or null`)
        .nullable()
        .default(null),
      sumArgument: z
        .string({ error: 'must be a dotted path of identifiers or null' })
        .regex(
          SUM_ARGUMENT_PATTERN,
          'must be a dotted path of identifiers into the arguments (e.g. amount, payment.total)',
        )
        .nullable()
        .default(null),
      maxSum: z
        .number({ error: `must be a number above 0 and at most ${MAX_LIMIT_SUM}, or null` })
        .gt(0, 'must be above 0')
        .max(MAX_LIMIT_SUM, `must be at most ${MAX_LIMIT_SUM}`)
        .nullable()
        .default(null),
      action: z.enum(LIMIT_ACTIONS, { error: `must be one of ${LIMIT_ACTIONS.join(', ')}` }),
    },
    { error: 'must be an object' },
  )
  .strict()
  .superRefine((limit, context) => {
    if (limit.sumArgument !== null && limit.maxSum === null) {
      context.addIssue({ code: 'custom', path: ['maxSum'], message: 'a budget needs maxSum' });
    }
    if (limit.maxSum !== null && limit.sumArgument === null) {
      context.addIssue({
        code: 'custom',
        path: ['sumArgument'],
        message: 'a budget needs sumArgument (the argument whose values are summed)',
      });
    }
    if (limit.maxCalls === null && limit.maxSum === null && limit.sumArgument === null) {
      context.addIssue({
        code: 'custom',
        path: ['maxCalls'],
        message: 'a limit needs maxCalls, a budget (sumArgument and maxSum), or both',
      });
    }
  });

/** The gateway policy's `limits`: at most 64, each limitId once. */
export const usageLimitsRule = z
  .array(limitRule, { error: 'must be a list of limits' })
  .max(MAX_LIMITS_PER_TENANT, `must hold at most ${MAX_LIMITS_PER_TENANT} limits`)
  .superRefine((limits, context) => {
    const seen = new Set<string>();
    limits.forEach((limit, index) => {
      if (seen.has(limit.limitId)) {
        context.addIssue({
          code: 'custom',
          path: [index, 'limitId'],
          message: `"${limit.limitId}" is the limitId of an earlier limit; each must be unique`,
        });
      }
      seen.add(limit.limitId);
    });
  });

/** Whether the limit sums an argument (a budget), whatever else it counts. */
export function isBudget(limit: UsageLimit): boolean {
  return limit.sumArgument !== null && limit.maxSum !== null;
}
