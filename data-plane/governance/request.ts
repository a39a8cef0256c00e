// Validates an inspect body (spec §2.1) against its schema (body-schema.ts), then checks what the
// schema does not say. Every problem is the same answer (400 MCP_MALFORMED_RPC, spec §1.3 step
// 1), so only the first one is reported, naming its field. Also bounds the nesting of `request`
// so later steps (canonical JSON for approval digests, detectors, NPL paths) never meet a
// structure deep enough to hurt them.
//
// Why a hand-written fast path in front of the schema: this runs on every inspect call. On a
// typical 276-byte tools/call body (200 000 parses, median of 5 runs, Node 20, 2 shared vCPUs),
// the previous hand-written checks took 0.16 µs a parse and the zod schema's safeParse 0.75 µs
// (4.7×; 2.2 µs against 0.4 µs in a busier run), mostly its per-string length checks and the
// copy of `params`. With isPlainlyValid first, a valid body costs 0.19 µs. The fast path only
// ever says yes to a body the schema accepts unchanged; everything else goes to the schema,
// which decides and words the answer.

import type { FieldIssue } from '../../shared/errors/index.js';
import {
  type AgentId,
  type ApprovalId,
  asAgentId,
  asApprovalId,
  asServerId,
  type ServerId,
} from '../../shared/ids.js';
import { isRecord } from '../../shared/json/is-record.js';
import { MCP_METHODS } from '../../shared/mcp/protocol.js';
import { POLICY_URI_PATTERN } from '../../shared/npl/index.js';
import { EXECUTION_MODES, type ExecutionMode } from '../../shared/snapshot/index.js';
import { describeIssues, fieldIssues, wordIssues } from '../../shared/validation/field-issues.js';
import { MAX_CHAIN_LINKS } from '../agentiam/limits.js';
import { withinJsonBounds } from '../json-bounds.js';
import {
  INSPECT_FIELD_HINTS,
  type InspectBody,
  inspectBodySchema,
  jsonRpcCallSchema,
  MAX_ID_LENGTH,
} from './body-schema.js';

export interface InspectRequest {
  readonly agentId: AgentId;
  readonly executionId: string;
  readonly serverId: ServerId;
  readonly toolName: string;
  readonly mode: ExecutionMode;
  readonly rpc: JsonRpcCall;
  /** `svc://name@semver` the caller asks to be evaluated too. */
  readonly policy: string | undefined;
  /** Resubmission of a held call. */
  readonly approvalId: ApprovalId | undefined;
  /** The presented identity credential (the root of the chain for a delegate). */
  readonly agentCredential: Readonly<Record<string, unknown>> | undefined;
  /** The presented delegation links, root side first. */
  readonly delegationChain: readonly unknown[] | undefined;
  /** false: the agent runs the tool itself; an allow is decided and audited but never forwarded. */
  readonly forward: boolean;
  /**
   * A held call resumes the open approval of the same call (same agent and digest) instead of
   * asking again: the MCP proxy's retry after a wait that ended (issue 14 item 5).
   */
  readonly resumeOpenApproval?: boolean;
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
  | {
      readonly ok: false;
      /** Every problem, one sentence per field (describeIssues). */
      readonly message: string;
      readonly rpcId: string | number | null;
      /** What to send instead, for the first wrong field; undefined for the registry's hint. */
      readonly hint: string | undefined;
      readonly issues: readonly FieldIssue[];
    };

/** How deep and how large the JSON of a governed call may be (the inspect body, proxied params). */
export const MAX_DEPTH = 64;
export const MAX_NODES = 100_000;
const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});
/** The execution modes, for checking a mode named in a request. */
export const MODES: ReadonlySet<string> = new Set(EXECUTION_MODES);
const RPC_MEMBERS: ReadonlySet<string> = new Set(Object.keys(jsonRpcCallSchema.shape));

/** The JSON-RPC id to echo in a refusal: only a valid one, else null. */
function echoedRpcId(body: unknown): string | number | null {
  const rpc = isRecord(body) ? body.request : undefined;
  const id = isRecord(rpc) ? rpc.id : undefined;
  if (typeof id === 'string' && id.length <= MAX_ID_LENGTH) return id;
  if (typeof id === 'number' && Number.isFinite(id)) return id;
  return null;
}

/** The shared wording of the schema's problems, made once. */
const WORDING = { error: wordIssues(inspectBodySchema) };

/**
 * The fast path: true only for a body the schema accepts as it is, checked by hand. Anything
 * else, odd or wrong, goes to the schema, which has the last word and the wording. Never looser
 * than inspectBodySchema: a body accepted here is one the schema accepts unchanged.
 */
function isPlainlyValid(body: unknown): body is InspectBody {
  if (!isRecord(body)) return false;
  const rpc = body.request;
  if (
    !isIdentifier(body.agent_id) ||
    !isIdentifier(body.execution_id) ||
    !isIdentifier(body.server_id) ||
    !isIdentifier(body.tool_name) ||
    typeof body.execution_mode !== 'string' ||
    !MODES.has(body.execution_mode) ||
    (body.policy !== undefined &&
      (typeof body.policy !== 'string' || !POLICY_URI_PATTERN.test(body.policy))) ||
    (body.approval_id !== undefined && !isIdentifier(body.approval_id)) ||
    (body.agent_credential !== undefined && !isRecord(body.agent_credential)) ||
    (body.delegation_chain !== undefined &&
      (!Array.isArray(body.delegation_chain) || body.delegation_chain.length > MAX_CHAIN_LINKS)) ||
    (body.forward !== undefined && typeof body.forward !== 'boolean') ||
    !isRecord(rpc) ||
    rpc.jsonrpc !== '2.0' ||
    echoedRpcId(body) === null ||
    !isIdentifier(rpc.method) ||
    (rpc.params !== undefined && !isRecord(rpc.params))
  ) {
    return false;
  }
  for (const key in rpc) if (!RPC_MEMBERS.has(key)) return false;
  return true;
}

function isIdentifier(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;
}

export function parseInspectRequest(body: unknown): ParseResult {
  const rpcId = echoedRpcId(body);
  let call: InspectBody;
  if (isPlainlyValid(body)) call = body;
  else {
    const parsed = inspectBodySchema.safeParse(body, WORDING);
    if (!parsed.success) {
      const issues = fieldIssues(parsed.error);
      const first = parsed.error.issues[0]!;
      const field = first.code === 'unrecognized_keys' ? first.keys[0] : first.path[0];
      return refuse(issues, rpcId, INSPECT_FIELD_HINTS[String(field)]);
    }
    call = parsed.data;
  }
  const rpc = call.request;
  const params = rpc.params;
  let args: Readonly<Record<string, unknown>> = EMPTY;
  if (rpc.method === MCP_METHODS.TOOLS_CALL) {
    if (!params || typeof params.name !== 'string') {
      return fail(
        'request.params.name',
        'must be the tool name',
        rpcId,
        INSPECT_FIELD_HINTS.request,
      );
    }
    // What is inspected must be what is forwarded: the tool named twice must be the same tool.
    if (params.name !== call.tool_name) {
      return fail(
        'tool_name',
        'differs from request.params.name',
        rpcId,
        INSPECT_FIELD_HINTS.tool_name,
      );
    }
    if (params.arguments !== undefined) {
      if (!isRecord(params.arguments)) {
        return fail(
          'request.params.arguments',
          'must be a JSON object',
          rpcId,
          INSPECT_FIELD_HINTS.request,
        );
      }
      args = params.arguments;
    }
  }
  if (!withinBounds(params)) {
    return fail(
      'request.params',
      `is nested deeper than ${MAX_DEPTH} or too large`,
      rpcId,
      INSPECT_FIELD_HINTS.request,
    );
  }
  // Credentials are walked by JSON-LD processing and hashed as JSON text: bounded the same way.
  if (call.agent_credential !== undefined && !withinBounds(call.agent_credential)) {
    return fail(
      'agent_credential',
      `is nested deeper than ${MAX_DEPTH} or too large`,
      rpcId,
      INSPECT_FIELD_HINTS.agent_credential,
    );
  }
  if (call.delegation_chain !== undefined && !withinBounds(call.delegation_chain)) {
    return fail(
      'delegation_chain',
      `is nested deeper than ${MAX_DEPTH} or too large`,
      rpcId,
      INSPECT_FIELD_HINTS.delegation_chain,
    );
  }
  return {
    ok: true,
    value: {
      agentId: asAgentId(call.agent_id),
      executionId: call.execution_id,
      serverId: asServerId(call.server_id),
      toolName: call.tool_name,
      mode: call.execution_mode,
      rpc: { jsonrpc: '2.0', id: rpc.id, method: rpc.method, params, arguments: args },
      policy: call.policy,
      approvalId: call.approval_id === undefined ? undefined : asApprovalId(call.approval_id),
      agentCredential: call.agent_credential,
      delegationChain: call.delegation_chain,
      forward: call.forward !== false,
    },
  };
}

function fail(
  field: string,
  message: string,
  rpcId: string | number | null,
  hint: string | undefined,
): ParseResult {
  return refuse([{ field, message }], rpcId, hint);
}

function refuse(
  issues: readonly FieldIssue[],
  rpcId: string | number | null,
  hint: string | undefined,
): ParseResult {
  return { ok: false, message: describeIssues(issues), rpcId, hint, issues };
}

function withinBounds(root: unknown): boolean {
  return withinJsonBounds(root, MAX_DEPTH, MAX_NODES);
}
