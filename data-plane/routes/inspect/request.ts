// Validates an inspect body (spec §2.1) in one pass, without a schema library: every problem is
// the same answer (400 MCP_MALFORMED_RPC, spec §1.3 step 1), so we stop at the first one and say
// which field. Also bounds the nesting of `request` so later steps (canonical JSON for approval
// digests, detectors, NPL paths) never meet a structure deep enough to hurt them.
import { EXECUTION_MODES, type ExecutionMode } from '../../../shared/snapshot/index.js';

export interface InspectRequest {
  readonly agentId: string;
  readonly executionId: string;
  readonly serverId: string;
  readonly toolName: string;
  readonly mode: ExecutionMode;
  readonly rpc: JsonRpcCall;
  /** `svc://name@semver` the caller asks to be evaluated too. */
  readonly policy: string | undefined;
  /** Resubmission of a held call. */
  readonly approvalId: string | undefined;
}

export interface JsonRpcCall {
  readonly jsonrpc: '2.0';
  readonly id: string | number;
  readonly method: string;
  readonly params: Readonly<Record<string, unknown>> | undefined;
  /** `params.arguments` of a tools/call (an object), else `{}`. */
  readonly arguments: Readonly<Record<string, unknown>>;
}

export type ParseResult =
  | { readonly ok: true; readonly value: InspectRequest }
  | { readonly ok: false; readonly message: string; readonly rpcId: string | number | null };

const MAX_ID_LENGTH = 256;
const MAX_DEPTH = 64;
const MAX_NODES = 100_000;
const MODES: ReadonlySet<string> = new Set(EXECUTION_MODES);
const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function identifier(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;
}

export function parseInspectRequest(body: unknown): ParseResult {
  if (!isRecord(body)) return fail('body must be a JSON object', null);
  const rpc = body.request;
  const rpcId =
    isRecord(rpc) && (typeof rpc.id === 'string' || typeof rpc.id === 'number') ? rpc.id : null;
  if (!identifier(body.agent_id)) return fail('agent_id must be a non-empty string', rpcId);
  if (!identifier(body.execution_id)) return fail('execution_id must be a non-empty string', rpcId);
  if (!identifier(body.server_id)) return fail('server_id must be a non-empty string', rpcId);
  if (!identifier(body.tool_name)) return fail('tool_name must be a non-empty string', rpcId);
  if (typeof body.execution_mode !== 'string' || !MODES.has(body.execution_mode)) {
    return fail('execution_mode must be one of production, simulation, shadow', rpcId);
  }
  if (body.policy !== undefined && typeof body.policy !== 'string') {
    return fail('policy must be a svc://name@version string', rpcId);
  }
  if (body.approval_id !== undefined && !identifier(body.approval_id)) {
    return fail('approval_id must be a non-empty string', rpcId);
  }
  if (!isRecord(rpc)) return fail('request must be a JSON-RPC 2.0 object', null);
  if (rpc.jsonrpc !== '2.0') return fail('request.jsonrpc must be "2.0"', rpcId);
  if (rpcId === null || (typeof rpcId === 'number' && !Number.isFinite(rpcId))) {
    return fail('request.id must be a string or a number', null);
  }
  if (typeof rpcId === 'string' && rpcId.length > MAX_ID_LENGTH) {
    return fail('request.id is too long', null);
  }
  if (!identifier(rpc.method)) return fail('request.method must be a non-empty string', rpcId);
  const params = rpc.params;
  if (params !== undefined && !isRecord(params)) {
    return fail('request.params must be an object', rpcId);
  }
  let args: Readonly<Record<string, unknown>> = EMPTY;
  if (rpc.method === 'tools/call') {
    if (!params || typeof params.name !== 'string') {
      return fail('request.params.name must be the tool name', rpcId);
    }
    // What is inspected must be what is forwarded: the tool named twice must be the same tool.
    if (params.name !== body.tool_name) {
      return fail('tool_name differs from request.params.name', rpcId);
    }
    if (params.arguments !== undefined) {
      if (!isRecord(params.arguments)) {
        return fail('request.params.arguments must be an object', rpcId);
      }
      args = params.arguments;
    }
  }
  for (const key of Object.keys(rpc)) {
    if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') {
      return fail(`request has an unknown member "${key}"`, rpcId);
    }
  }
  if (!withinBounds(params)) {
    return fail(`request.params is nested deeper than ${MAX_DEPTH} or too large`, rpcId);
  }
  return {
    ok: true,
    value: {
      agentId: body.agent_id,
      executionId: body.execution_id,
      serverId: body.server_id,
      toolName: body.tool_name,
      mode: body.execution_mode as ExecutionMode,
      rpc: { jsonrpc: '2.0', id: rpcId, method: rpc.method, params, arguments: args },
      policy: body.policy,
      approvalId: body.approval_id as string | undefined,
    },
  };
}

function fail(message: string, rpcId: string | number | null): ParseResult {
  return { ok: false, message, rpcId };
}

/** Iterative depth and size check: no recursion, so no stack to exhaust. */
function withinBounds(root: unknown): boolean {
  if (typeof root !== 'object' || root === null) return true;
  const stack: unknown[] = [root];
  const depths: number[] = [1];
  let nodes = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    const depth = depths.pop() as number;
    if (++nodes > MAX_NODES || depth > MAX_DEPTH) return false;
    const children = Array.isArray(value) ? value : Object.values(value as object);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return true;
}
