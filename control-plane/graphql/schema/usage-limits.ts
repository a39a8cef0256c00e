// The GraphQL shapes of usage limits (docs/limits.md): the gateway policy's `limits` list
// (UsageLimit, and UsageLimitInput to replace it), their enums, and the usage a limit has counted
// (LimitUsage, Agent.usage). The rules and bounds are the limits' one definition
// (shared/limits/usage-limits.ts); descriptions here say what each field means to an operator.
import {
  LIMIT_ACTIONS,
  LIMIT_SUBJECTS,
  type UsageLimit,
} from '../../../shared/limits/usage-limits.js';
import { type LimitUsage, readLimitUsage } from '../../services/limit-usage.js';
import { builder } from '../builder.js';

/** A stored LimitHit (approvals.limitHit; data-plane/limits/usage-limiter.ts writes it). */
interface LimitHitView {
  readonly limitId: string;
  readonly per: (typeof LIMIT_SUBJECTS)[number];
  readonly windowSeconds: number;
  readonly used: number;
  readonly max: number;
  readonly requested: number;
  readonly resetsAt: string;
}

const DESCRIPTIONS = {
  limitId:
    'Unique within the tenant, ^[a-z][a-z0-9_]{0,62}$: names the limit in answers, audit ' +
    'entries, metrics and NPL paths (usage.<limitId>.calls).',
  per: 'Whose calls are counted together.',
  tools: 'Tool-name globs of tools/call it applies to; empty: every tool.',
  servers: 'Server ids it applies to; empty: every server.',
  windowSeconds:
    'Length of the fixed window, 1-2592000 s; windows are aligned to multiples of it since the ' +
    "Unix epoch on the database's clock (86400 resets at 00:00 UTC).",
  maxCalls: 'Calls allowed per window, 1-10^9; null: calls are not limited (a budget only).',
  sumArgument:
    'For a budget: the dotted path into the call arguments whose values are summed ' +
    '(e.g. amount, payment.total); null: no budget.',
  maxSum: 'For a budget: the most the sum may reach in a window (above 0, decimals allowed).',
  action: 'DENY refuses a call that would exceed the limit; REQUIRE_HUMAN holds it for approval.',
} as const;

const SUBJECT_DESCRIPTIONS = {
  AGENT: "Each agent's calls are counted on their own.",
  AGENT_TOOL: "Each agent's calls of each tool are counted on their own.",
  TENANT: 'The calls of every agent of the tenant are counted together.',
} as const;

const ACTION_DESCRIPTIONS = {
  DENY: 'The call is refused (HTTP 429, RATE_LIMIT_EXCEEDED or BUDGET_EXCEEDED).',
  REQUIRE_HUMAN: 'The call is held in the approval queue; an approved call passes and counts.',
} as const;

export const UsageLimitPerRef = builder.enumType('UsageLimitPer', {
  description: 'Whose calls a limit counts together.',
  values: Object.fromEntries(
    LIMIT_SUBJECTS.map((value) => [value, { value, description: SUBJECT_DESCRIPTIONS[value] }]),
  ) as unknown as Record<
    (typeof LIMIT_SUBJECTS)[number],
    { value: (typeof LIMIT_SUBJECTS)[number] }
  >,
});

export const UsageLimitActionRef = builder.enumType('UsageLimitAction', {
  description: 'What a call meets when it would exceed a limit.',
  values: Object.fromEntries(
    LIMIT_ACTIONS.map((value) => [value, { value, description: ACTION_DESCRIPTIONS[value] }]),
  ) as unknown as Record<(typeof LIMIT_ACTIONS)[number], { value: (typeof LIMIT_ACTIONS)[number] }>,
});

export const UsageLimitRef = builder.objectRef<UsageLimit>('UsageLimit').implement({
  description: 'A call-count limit and/or budget of the gateway policy (docs/limits.md).',
  fields: (t) => ({
    limitId: t.exposeString('limitId', { description: DESCRIPTIONS.limitId }),
    per: t.field({ type: UsageLimitPerRef, description: DESCRIPTIONS.per, resolve: (l) => l.per }),
    tools: t.exposeStringList('tools', { description: DESCRIPTIONS.tools }),
    servers: t.exposeStringList('servers', { description: DESCRIPTIONS.servers }),
    windowSeconds: t.exposeInt('windowSeconds', { description: DESCRIPTIONS.windowSeconds }),
    maxCalls: t.exposeInt('maxCalls', { nullable: true, description: DESCRIPTIONS.maxCalls }),
    sumArgument: t.exposeString('sumArgument', {
      nullable: true,
      description: DESCRIPTIONS.sumArgument,
    }),
    maxSum: t.exposeFloat('maxSum', { nullable: true, description: DESCRIPTIONS.maxSum }),
    action: t.field({
      type: UsageLimitActionRef,
      description: DESCRIPTIONS.action,
      resolve: (limit) => limit.action,
    }),
  }),
});

export const UsageLimitInputRef = builder.inputType('UsageLimitInput', {
  description:
    'A limit of GatewayPolicyInput.limits; omitted or null optional fields take their default ' +
    '(tools and servers empty, no maxCalls, no budget).',
  fields: (t) => ({
    limitId: t.string({ required: true, description: DESCRIPTIONS.limitId }),
    per: t.field({ type: UsageLimitPerRef, required: true, description: DESCRIPTIONS.per }),
    tools: t.stringList({ required: false, description: DESCRIPTIONS.tools }),
    servers: t.stringList({ required: false, description: DESCRIPTIONS.servers }),
    windowSeconds: t.int({ required: true, description: DESCRIPTIONS.windowSeconds }),
    maxCalls: t.int({ required: false, description: DESCRIPTIONS.maxCalls }),
    sumArgument: t.string({ required: false, description: DESCRIPTIONS.sumArgument }),
    maxSum: t.float({ required: false, description: DESCRIPTIONS.maxSum }),
    action: t.field({
      type: UsageLimitActionRef,
      required: true,
      description: DESCRIPTIONS.action,
    }),
  }),
});

/** A limit as GraphQL gives it: omitted optional fields absent, null ones as null. */
export function limitFromInput(input: Record<string, unknown>): Record<string, unknown> {
  // GraphQL's null for an optional input field means "not given": the rule's default applies.
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null));
}

const LimitUsageRef = builder.objectRef<LimitUsage>('LimitUsage').implement({
  description:
    "What a usage limit has counted in its current window for an agent (for a TENANT limit, the whole tenant's calls).",
  fields: (t) => ({
    limitId: t.string({
      description: 'The limit (GatewayPolicy.limits).',
      resolve: (u) => u.limit.limitId,
    }),
    per: t.field({
      type: UsageLimitPerRef,
      description: DESCRIPTIONS.per,
      resolve: (u) => u.limit.per,
    }),
    action: t.field({
      type: UsageLimitActionRef,
      description: DESCRIPTIONS.action,
      resolve: (u) => u.limit.action,
    }),
    toolName: t.exposeString('toolName', {
      nullable: true,
      description:
        'For a limit counted per AGENT_TOOL: the tool this counter is for; null otherwise.',
    }),
    calls: t.exposeInt('calls', {
      description: 'Calls counted in the window (may lag the data planes by about a second).',
    }),
    maxCalls: t.int({
      nullable: true,
      description: DESCRIPTIONS.maxCalls,
      resolve: (u) => u.limit.maxCalls,
    }),
    sum: t.exposeFloat('sum', {
      nullable: true,
      description: "The budget's sum in the window; null without a budget.",
    }),
    maxSum: t.float({
      nullable: true,
      description: DESCRIPTIONS.maxSum,
      resolve: (u) => u.limit.maxSum,
    }),
    used: t.float({
      description: 'What the limit compares with max: the sum for a budget, else the calls.',
      resolve: (u) => u.sum ?? u.calls,
    }),
    max: t.float({
      description: 'The maximum: maxSum for a budget, else maxCalls.',
      resolve: (u) => u.limit.maxSum ?? u.limit.maxCalls ?? 0,
    }),
    windowStartsAt: t.expose('windowStartsAt', {
      type: 'DateTime',
      description: "Start of the current window (the database's clock).",
    }),
    resetsAt: t.expose('resetsAt', {
      type: 'DateTime',
      description: 'When the window ends and the usage starts again from zero.',
    }),
  }),
});

builder.prismaObjectFields('Agent', (t) => ({
  usage: t.field({
    type: [LimitUsageRef],
    description:
      "Each usage limit of the tenant's gateway policy with what it counted for this agent in its current window (docs/limits.md). Empty without limits.",
    resolve: (agent, _args, context) => readLimitUsage(context.db, agent.tenantId, agent.id),
  }),
}));

const LimitHitRef = builder.objectRef<LimitHitView>('LimitHit').implement({
  description:
    'The usage limit a call would have exceeded, and its usage then: what the inspect answer and the JSON-RPC error carry as `limit`.',
  fields: (t) => ({
    limitId: t.exposeString('limitId', { description: 'The limit (GatewayPolicy.limits).' }),
    per: t.field({
      type: UsageLimitPerRef,
      description: DESCRIPTIONS.per,
      resolve: (hit) => hit.per,
    }),
    windowSeconds: t.exposeInt('windowSeconds', { description: DESCRIPTIONS.windowSeconds }),
    used: t.exposeFloat('used', {
      description:
        'Calls (a call-count limit) or the sum (a budget) counted in the window before the call.',
    }),
    max: t.exposeFloat('max', { description: 'The maximum: maxCalls or maxSum.' }),
    requested: t.exposeFloat('requested', {
      description: 'What the call adds: 1 call, or its amount.',
    }),
    resetsAt: t.field({
      type: 'DateTime',
      description: 'When the window ends.',
      resolve: (hit) => new Date(hit.resetsAt),
    }),
  }),
});

builder.prismaObjectFields('Approval', (t) => ({
  limit: t.field({
    type: LimitHitRef,
    nullable: true,
    description:
      'For a call a usage limit held (action REQUIRE_HUMAN): the limit and the usage that triggered the hold; null for a call an NPL rule held.',
    resolve: (approval) => (approval.limitHit as LimitHitView | null) ?? null,
  }),
}));
