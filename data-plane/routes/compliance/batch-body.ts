// The batch request body: one zod schema is the contract (the route documents it in OpenAPI
// through z.toJSONSchema) and createBatchBodyValidator applies it. Order matters: the cheap bounds that
// protect the rest come first (JSON depth, item and tool-call counts: 413 before any item is
// looked at), then the schema (400 naming the JSON path of the first bad field), then the policy
// sizes. Types are never coerced: `"tool_name": 5` is an error, not the tool "5".
//
// Request fields are snake_case (DESIGN.md §6), named as in the inspect body where the meaning is
// the same. The first release's camelCase names stay accepted as deprecated aliases, field by
// field, so a body may mix both; a field sent under both names with different values is refused.
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { type GatewayError, gatewayError } from '../../../shared/errors/index.js';
import { isRecord } from '../../../shared/json/is-record.js';
import { LIMIT_ID_PATTERN, MAX_LIMITS_PER_TENANT } from '../../../shared/limits/usage-limits.js';
import {
  compileBodyValidator,
  type ValidatorCompiler,
} from '../../../shared/validation/body-validator.js';
import {
  BODY_FIELD,
  fieldIssues,
  invalidField,
  requestInvalid,
} from '../../../shared/validation/field-issues.js';
import { type ComplianceLimits, MAX_ITEM_ID_LENGTH } from './limits.js';

const anyJson = z.unknown().optional();

const contextSchema = z
  .strictObject(
    {
      agent: anyJson,
      server: anyJson,
      method: anyJson,
      tenant: anyJson,
      mode: anyJson,
      payload: anyJson,
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `has an unknown root ${JSON.stringify(issue.keys[0])} (allowed: ${CONTEXT_ROOTS.join(', ')}; tool_name, arguments and agent_role are fields of the call)`
          : undefined,
    },
  )
  .describe('Other NPL context roots (any JSON).');

/** Context roots a tool call may set besides tool_name, arguments and agent_role. */
export const CONTEXT_ROOTS: readonly string[] = Object.keys(contextSchema.shape);

/** The deprecated camelCase alias of each snake_case request field that has one. */
const CALL_FIELD_ALIASES = { tool_name: 'tool', arguments: 'args', agent_role: 'agentRole' };
const ITEM_FIELD_ALIASES = { policy_uri: 'policyUri', tool_calls: 'toolCalls' };

function deprecatedAlias<T extends z.ZodType>(schema: T, field: string): T {
  return schema.meta({ deprecated: true, description: `Deprecated alias of \`${field}\`.` });
}

/**
 * A field given under both its names must have one value there, compared after parsing (so the
 * same tool calls under `tool_calls` and `toolCalls`, in either spelling, agree).
 */
function refuseConflictingAliases(
  value: Readonly<Record<string, unknown>>,
  aliases: Readonly<Record<string, string>>,
  ctx: z.RefinementCtx,
): void {
  for (const [field, alias] of Object.entries(aliases)) {
    const current = value[field];
    const deprecated = value[alias];
    if (current === undefined || deprecated === undefined) continue;
    if (isDeepStrictEqual(current, deprecated)) continue;
    ctx.addIssue({
      code: 'custom',
      message: `has both ${field} and ${alias} (its deprecated alias) with different values; send ${field} only`,
      input: value,
    });
  }
}

/**
 * What NPL reads as `usage.<limitId>.*` (docs/limits.md): the window's values of the usage limits
 * the call would meet, given by the caller since the batch runs on no gateway's counters.
 */
const usageSchema = z
  .record(
    z.string().regex(LIMIT_ID_PATTERN, 'must be a limitId (^[a-z][a-z0-9_]{0,62}$)'),
    z.strictObject({
      calls: z.number().min(0).optional(),
      callsAfter: z.number().min(0).optional(),
      sum: z.number().min(0).optional(),
      sumAfter: z.number().min(0).optional(),
    }),
  )
  .refine((usage) => Object.keys(usage).length <= MAX_LIMITS_PER_TENANT, {
    message: `must name at most ${MAX_LIMITS_PER_TENANT} limits`,
  })
  .describe(
    'The context `usage` (docs/limits.md): per limitId, the window values calls, sum (before the call), callsAfter and sumAfter (with it), numbers of at least 0.',
  );

const toolName = z.string().min(1);
const toolArguments = z.record(z.string(), z.unknown());
const agentRole = z.string();

const toolCallSchema = z
  .strictObject({
    tool_name: toolName
      .optional()
      .describe('The context `tool.name` (required; `tool` is its deprecated alias).'),
    arguments: toolArguments
      .optional()
      .describe('The tool arguments (context `args` and `tool.args`); default `{}`.'),
    agent_role: agentRole.optional().describe('Checked against the policy `targetAgents`.'),
    context: contextSchema.optional(),
    usage: usageSchema.optional(),
    tool: deprecatedAlias(toolName, 'tool_name').optional(),
    args: deprecatedAlias(toolArguments, 'arguments').optional(),
    agentRole: deprecatedAlias(agentRole, 'agent_role').optional(),
  })
  .superRefine((call, ctx) => {
    if (call.tool_name === undefined && call.tool === undefined) {
      ctx.addIssue({ code: 'custom', message: 'is required', path: ['tool_name'], input: call });
    }
    refuseConflictingAliases(call, CALL_FIELD_ALIASES, ctx);
  })
  .transform(
    (call): BatchToolCall => ({
      tool: call.tool_name ?? call.tool ?? '',
      args: call.arguments ?? call.args ?? {},
      agentRole: call.agent_role ?? call.agentRole,
      context: call.context,
      usage: call.usage,
    }),
  )
  .meta({ anyOf: [{ required: ['tool_name'] }, { required: ['tool'] }] });

const policyUri = z.string();
const toolCalls = z.array(toolCallSchema);

function itemSchema(limits: ComplianceLimits) {
  return z
    .strictObject({
      id: z.string().max(MAX_ITEM_ID_LENGTH).optional().describe('Echoed back in the answer.'),
      policy: z
        .union([z.string(), z.record(z.string(), z.unknown())], {
          error: 'must be YAML/JSON text or an object',
        })
        .optional()
        .describe(
          `NPL document as YAML/JSON text or a JSON object (≤ ${limits.maxPolicyBytes} bytes).`,
        ),
      policy_uri: policyUri.optional().describe('A pin svc://name@x.y.z of a bundled policy.'),
      tool_calls: toolCalls.optional().describe('The tool calls to decide; default none.'),
      policyUri: deprecatedAlias(policyUri, 'policy_uri').optional(),
      toolCalls: deprecatedAlias(toolCalls, 'tool_calls').optional(),
    })
    .superRefine((item, ctx) => {
      const hasUri = item.policy_uri !== undefined || item.policyUri !== undefined;
      if ((item.policy === undefined) === !hasUri) {
        ctx.addIssue({
          code: 'custom',
          message: 'must have exactly one of policy and policy_uri',
          input: item,
        });
      }
      refuseConflictingAliases(item, ITEM_FIELD_ALIASES, ctx);
    })
    .meta({
      oneOf: [
        { required: ['policy'] },
        { anyOf: [{ required: ['policy_uri'] }, { required: ['policyUri'] }] },
      ],
    });
}

/** The schema of a batch under these limits (the item count and policy size are documented). */
export function createBatchBodySchema(limits: ComplianceLimits) {
  return z.strictObject({
    items: z.array(itemSchema(limits)).min(1).max(limits.maxItems),
  });
}

type BatchBody = z.output<ReturnType<typeof createBatchBodySchema>>;
type BodyItem = BatchBody['items'][number];

export interface BatchToolCall {
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly agentRole: string | undefined;
  readonly context: Readonly<Record<string, unknown>> | undefined;
  readonly usage?: Readonly<Record<string, Readonly<Record<string, number>>>> | undefined;
}

export interface BatchItem {
  readonly id: string | undefined;
  /** Exactly one of `policy` and `policyUri` is set. */
  readonly policy: string | Readonly<Record<string, unknown>> | undefined;
  readonly policyUri: string | undefined;
  /** UTF-8 bytes of the inline policy (text, or JSON text of the object); 0 for a pin. */
  readonly policyBytes: number;
  readonly toolCalls: readonly BatchToolCall[];
}

export interface ComplianceBatch {
  readonly items: readonly BatchItem[];
}

/**
 * REQUEST_INVALID listing every problem; `path` keeps naming the first one's JSON path in the
 * bracket form the first release answered with (`items[0].tool_calls[1].tool_name`).
 */
function invalid(error: z.ZodError): GatewayError {
  const first = error.issues[0]!;
  const path = first.code === 'unrecognized_keys' ? [...first.path, first.keys[0]!] : first.path;
  return requestInvalid(
    fieldIssues(error),
    path.length === 0 ? undefined : { path: z.core.toDotPath(path) },
  );
}

function tooLarge(limit: keyof ComplianceLimits, max: number, actual: number, subject: string) {
  return gatewayError(
    'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
    { subject, actual, max, limit },
    { details: { limit, max, actual } },
  );
}

/** Nesting depth of a JSON value (a scalar is 0, `{}` is 1), without recursion; stops past `max`. */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const node = stack.pop();
    const depth = depths.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === 'object') {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

function arrayLength(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}

/** The counts that bound the rest, checked before any item is read: 413 when over. */
function checkCounts(body: unknown, limits: ComplianceLimits): GatewayError | undefined {
  const items = isRecord(body) ? body.items : undefined;
  if (!Array.isArray(items)) return undefined;
  if (items.length > limits.maxItems) {
    return tooLarge('maxItems', limits.maxItems, items.length, 'items');
  }
  let calls = 0;
  for (const item of items) {
    // Under both names the calls must be the same ones (or the body is refused): count once.
    if (isRecord(item))
      calls += Math.max(arrayLength(item.tool_calls), arrayLength(item.toolCalls));
  }
  if (calls > limits.maxToolCalls) {
    return tooLarge('maxToolCalls', limits.maxToolCalls, calls, 'tool calls in all items');
  }
  return undefined;
}

function policyBytes(policy: BodyItem['policy']): number {
  if (policy === undefined) return 0;
  return Buffer.byteLength(typeof policy === 'string' ? policy : JSON.stringify(policy), 'utf8');
}

/** The bounds that protect the schema: nesting depth, then the item and tool-call counts. */
function checkBounds(body: unknown, limits: ComplianceLimits): GatewayError | undefined {
  if (jsonDepthExceeds(body, limits.maxDepth)) {
    return invalidField(BODY_FIELD, `nests deeper than ${limits.maxDepth} levels`);
  }
  return checkCounts(body, limits);
}

/** The parsed body as the route reads it (aliases resolved), within the policy sizes. */
function normalize(body: BatchBody, limits: ComplianceLimits): ComplianceBatch | GatewayError {
  const items: BatchItem[] = [];
  let total = 0;
  for (let i = 0; i < body.items.length; i++) {
    const item = body.items[i]!;
    const { id, policy } = item;
    const bytes = policyBytes(policy);
    if (bytes > limits.maxPolicyBytes) {
      return tooLarge('maxPolicyBytes', limits.maxPolicyBytes, bytes, `items[${i}].policy bytes`);
    }
    total += bytes;
    items.push({
      id,
      policy,
      policyUri: item.policy_uri ?? item.policyUri,
      policyBytes: bytes,
      toolCalls: item.tool_calls ?? item.toolCalls ?? [],
    });
  }
  if (total > limits.maxTotalPolicyBytes) {
    return tooLarge(
      'maxTotalPolicyBytes',
      limits.maxTotalPolicyBytes,
      total,
      'inline policy bytes in all items',
    );
  }
  return { items };
}

/** The route's body validator, built once per limits: validates and normalizes the body. */
export function createBatchBodyValidator(limits: ComplianceLimits): ValidatorCompiler {
  return compileBodyValidator(createBatchBodySchema(limits), {
    refuse: invalid,
    before: (body) => checkBounds(body, limits),
    after: (body) => normalize(body, limits),
  });
}
