// Checks the batch envelope before any policy is parsed, and normalizes it. Order matters: the
// cheap bounds that protect the rest come first (body shape, JSON depth, item and tool-call
// counts), then the field types (400 with the JSON path of the first bad field), then the policy
// sizes. Types are never coerced: `"tool": 5` is an error, not the tool "5".
import { GatewayError } from '../../../shared/errors/index.js';
import type { NplContext } from '../../../shared/npl/index.js';
import { type ComplianceLimits, MAX_ITEM_ID_LENGTH } from './limits.js';

/** Context roots a tool call may set besides tool, args and agentRole. */
export const CONTEXT_ROOTS = ['agent', 'server', 'method', 'tenant', 'mode', 'payload'] as const;

const BATCH_FIELDS: ReadonlySet<string> = new Set(['items']);
const ITEM_FIELDS: ReadonlySet<string> = new Set(['id', 'policy', 'policyUri', 'toolCalls']);
const CALL_FIELDS: ReadonlySet<string> = new Set(['tool', 'args', 'agentRole', 'context']);
const CONTEXT_FIELDS: ReadonlySet<string> = new Set(CONTEXT_ROOTS);

export interface BatchToolCall {
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly agentRole: string | undefined;
  readonly context: Readonly<Record<string, unknown>> | undefined;
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

export type EnvelopeResult =
  | { readonly ok: true; readonly batch: ComplianceBatch }
  | { readonly ok: false; readonly error: GatewayError };

type Rec = Record<string, unknown>;

function isRecord(value: unknown): value is Rec {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function invalid(message: string, path?: string): EnvelopeResult {
  return {
    ok: false,
    error: new GatewayError('REQUEST_INVALID', message, path ? { details: { path } } : undefined),
  };
}

function tooLarge(limit: keyof ComplianceLimits, max: number, actual: number, what: string) {
  return {
    ok: false,
    error: new GatewayError(
      'COMPLIANCE_BATCH_LIMIT_EXCEEDED',
      `${what}: ${actual} exceeds the limit of ${max} (${limit})`,
      { details: { limit, max, actual } },
    ),
  } as const;
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

function unknownField(obj: Rec, allowed: ReadonlySet<string>): string | undefined {
  for (const key of Object.keys(obj)) if (!allowed.has(key)) return key;
  return undefined;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function checkToolCall(raw: unknown, path: string): BatchToolCall | EnvelopeResult {
  if (!isRecord(raw)) return invalid(`${path} must be an object, not ${typeName(raw)}`, path);
  const extra = unknownField(raw, CALL_FIELDS);
  if (extra !== undefined) {
    return invalid(
      `${path} has an unknown field ${JSON.stringify(extra)} (allowed: tool, args, agentRole, context)`,
      `${path}.${extra}`,
    );
  }
  const { tool, args, agentRole, context } = raw;
  if (typeof tool !== 'string' || tool === '') {
    return invalid(`${path}.tool must be a non-empty string`, `${path}.tool`);
  }
  if (args !== undefined && !isRecord(args)) {
    return invalid(`${path}.args must be an object, not ${typeName(args)}`, `${path}.args`);
  }
  if (agentRole !== undefined && typeof agentRole !== 'string') {
    return invalid(`${path}.agentRole must be a string`, `${path}.agentRole`);
  }
  if (context !== undefined) {
    if (!isRecord(context)) {
      return invalid(
        `${path}.context must be an object, not ${typeName(context)}`,
        `${path}.context`,
      );
    }
    const root = unknownField(context, CONTEXT_FIELDS);
    if (root !== undefined) {
      return invalid(
        `${path}.context has an unknown root ${JSON.stringify(root)} (allowed: ${CONTEXT_ROOTS.join(', ')}; tool, args and agentRole are fields of the call)`,
        `${path}.context.${root}`,
      );
    }
  }
  return { tool, args: args ?? {}, agentRole, context };
}

function checkItem(raw: unknown, index: number): BatchItem | EnvelopeResult {
  const path = `items[${index}]`;
  if (!isRecord(raw)) return invalid(`${path} must be an object, not ${typeName(raw)}`, path);
  const extra = unknownField(raw, ITEM_FIELDS);
  if (extra !== undefined) {
    return invalid(
      `${path} has an unknown field ${JSON.stringify(extra)} (allowed: id, policy, policyUri, toolCalls)`,
      `${path}.${extra}`,
    );
  }
  const { id, policy, policyUri, toolCalls } = raw;
  if (id !== undefined && (typeof id !== 'string' || id.length > MAX_ITEM_ID_LENGTH)) {
    return invalid(
      `${path}.id must be a string of at most ${MAX_ITEM_ID_LENGTH} characters`,
      `${path}.id`,
    );
  }
  if ((policy === undefined) === (policyUri === undefined)) {
    return invalid(`${path} must have exactly one of policy and policyUri`, path);
  }
  if (policy !== undefined && typeof policy !== 'string' && !isRecord(policy)) {
    return invalid(
      `${path}.policy must be YAML/JSON text or an object, not ${typeName(policy)}`,
      `${path}.policy`,
    );
  }
  if (policyUri !== undefined && typeof policyUri !== 'string') {
    return invalid(`${path}.policyUri must be a string`, `${path}.policyUri`);
  }
  const calls: BatchToolCall[] = [];
  if (toolCalls !== undefined) {
    if (!Array.isArray(toolCalls)) {
      return invalid(`${path}.toolCalls must be an array`, `${path}.toolCalls`);
    }
    for (let i = 0; i < toolCalls.length; i++) {
      const call = checkToolCall(toolCalls[i], `${path}.toolCalls[${i}]`);
      if ('ok' in call) return call;
      calls.push(call);
    }
  }
  let policyBytes = 0;
  if (typeof policy === 'string') policyBytes = Buffer.byteLength(policy, 'utf8');
  else if (policy !== undefined) policyBytes = Buffer.byteLength(JSON.stringify(policy), 'utf8');
  return { id, policy, policyUri, policyBytes, toolCalls: calls };
}

/** Validates and normalizes a parsed JSON body against the batch contract and the limits. */
export function checkBatchEnvelope(body: unknown, limits: ComplianceLimits): EnvelopeResult {
  if (!isRecord(body)) {
    return invalid(`the body must be a JSON object with "items", not ${typeName(body)}`);
  }
  if (jsonDepthExceeds(body, limits.maxDepth)) {
    return invalid(`the body nests deeper than ${limits.maxDepth} levels`);
  }
  const extra = unknownField(body, BATCH_FIELDS);
  if (extra !== undefined) {
    return invalid(`unknown field ${JSON.stringify(extra)} (allowed: items)`, extra);
  }
  const items = body.items;
  if (!Array.isArray(items)) {
    return invalid(
      items === undefined ? 'items is required' : `items must be an array, not ${typeName(items)}`,
      'items',
    );
  }
  if (items.length === 0) return invalid('items must not be empty', 'items');
  if (items.length > limits.maxItems) {
    return tooLarge('maxItems', limits.maxItems, items.length, 'items');
  }
  let calls = 0;
  for (const item of items) {
    if (isRecord(item) && Array.isArray(item.toolCalls)) calls += item.toolCalls.length;
  }
  if (calls > limits.maxToolCalls) {
    return tooLarge('maxToolCalls', limits.maxToolCalls, calls, 'tool calls in all items');
  }
  const checked: BatchItem[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = checkItem(items[i], i);
    if ('ok' in item) return item;
    checked.push(item);
  }
  let totalPolicyBytes = 0;
  for (let i = 0; i < checked.length; i++) {
    const bytes = checked[i]!.policyBytes;
    if (bytes > limits.maxPolicyBytes) {
      return tooLarge('maxPolicyBytes', limits.maxPolicyBytes, bytes, `items[${i}].policy bytes`);
    }
    totalPolicyBytes += bytes;
  }
  if (totalPolicyBytes > limits.maxTotalPolicyBytes) {
    return tooLarge(
      'maxTotalPolicyBytes',
      limits.maxTotalPolicyBytes,
      totalPolicyBytes,
      'inline policy bytes in all items',
    );
  }
  return { ok: true, batch: { items: checked } };
}

/** The NPL evaluation context of one tool call. */
export function toolCallContext(call: BatchToolCall): NplContext {
  const ctx: Record<string, unknown> = { ...call.context };
  ctx.tool = { name: call.tool, args: call.args };
  ctx.args = call.args;
  if (call.agentRole !== undefined) ctx.agentRole = call.agentRole;
  return ctx as NplContext;
}
