// The bodies of inspect answers (DESIGN.md §4): one object shape for every outcome, so agents and
// the response schema (fast serialization) have one contract. Block answers carry the JSON-RPC
// error an MCP client would understand, built here and nowhere else.
import {
  ERROR_CODES,
  type ErrorCode,
  type FieldIssue,
  fieldIssueSchema,
} from '../../shared/errors/index.js';
import { JSONRPC_ERROR_CODES } from '../../shared/mcp/protocol.js';
import type { NplDecision } from '../../shared/npl/index.js';
import type { ExecutionMode } from '../../shared/snapshot/index.js';
import type { DetectorSignal } from '../inspection/index.js';
import type { LimitHit } from '../limits/usage-limiter.js';

export type Decision = 'allow' | 'deny' | 'require_human_approval';

export interface ApprovalView {
  readonly id: string;
  readonly status: string;
  readonly expiresAt: string;
}

export interface ShadowView {
  decision: Decision;
  reasonCode: ErrorCode | null;
  ruleId?: string;
  policy?: string;
  alertSeverity?: string;
  signal?: DetectorSignal;
  auditId?: string;
}

export interface InspectAnswer {
  decision: Decision;
  reasonCode: ErrorCode | null;
  inspectionId: string;
  executionMode: ExecutionMode | null;
  enforced: boolean;
  message?: string;
  hint?: string;
  /** A malformed call: every problem of the body (the error body's `issues`). */
  issues?: readonly FieldIssue[];
  /** A malformed call: the page that describes the request. */
  docs?: string;
  ruleId?: string;
  policy?: string;
  alertSeverity?: string;
  signal?: DetectorSignal;
  auditId?: string;
  approval?: ApprovalView;
  /** A call a usage limit refused or held: the limit, its usage and when it resets. */
  limit?: LimitHit;
  simulated?: boolean;
  /** false on an allow the caller asked not to forward (`forward: false`): no `response`. */
  forwarded?: boolean;
  response?: unknown;
  shadow?: ShadowView;
}

/** The JSON-RPC error of a block: INVALID_REQUEST for a malformed call, else GATEWAY_DENIED. */
export function buildBlockedRpcError(
  id: string | number | null,
  code: ErrorCode,
  message: string,
): unknown {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code:
        code === 'MCP_MALFORMED_RPC'
          ? JSONRPC_ERROR_CODES.INVALID_REQUEST
          : JSONRPC_ERROR_CODES.GATEWAY_DENIED,
      message,
      data: { reasonCode: code },
    },
  };
}

export function buildDenyAnswer(input: {
  inspectionId: string;
  mode: ExecutionMode | null;
  rpcId: string | number | null;
  code: ErrorCode;
  message: string;
  /** Instead of the registry's hint for the code (a malformed body's wrong field). */
  hint?: string | undefined;
  issues?: readonly FieldIssue[] | undefined;
  docs?: string | undefined;
  auditId: string | undefined;
  signal?: DetectorSignal | undefined;
  decision?: NplDecision | undefined;
  limit?: LimitHit | undefined;
}): InspectAnswer {
  const answer: InspectAnswer = {
    decision: 'deny',
    reasonCode: input.code,
    inspectionId: input.inspectionId,
    executionMode: input.mode,
    enforced: true,
    message: input.message,
    hint: input.hint ?? ERROR_CODES[input.code].hint,
    response: buildBlockedRpcError(input.rpcId, input.code, input.message),
  };
  if (input.issues) answer.issues = input.issues;
  if (input.docs) answer.docs = input.docs;
  if (input.auditId) answer.auditId = input.auditId;
  if (input.signal) answer.signal = input.signal;
  if (input.decision) addPolicyFields(answer, input.decision);
  if (input.limit) answer.limit = input.limit;
  return answer;
}

/** Names the policy, rule and severity that decided (answers and shadow views alike). */
export function addPolicyFields(
  target: { ruleId?: string; policy?: string; alertSeverity?: string },
  decision: NplDecision,
): void {
  target.ruleId = decision.ruleId;
  if (decision.policyUri) target.policy = decision.policyUri;
  target.alertSeverity = decision.alertSeverity;
}

const signalSchema = {
  type: 'object',
  properties: { kind: { type: 'string' }, detail: { type: 'string' }, path: { type: 'string' } },
} as const;

/** The response schema of every inspect answer (fast-json-stringify; `response` is free-form). */
export const inspectAnswerSchema = {
  type: 'object',
  properties: {
    decision: { type: 'string', enum: ['allow', 'deny', 'require_human_approval'] },
    reasonCode: { type: ['string', 'null'] },
    inspectionId: { type: 'string' },
    executionMode: { type: ['string', 'null'] },
    enforced: { type: 'boolean' },
    message: { type: 'string' },
    hint: { type: 'string' },
    issues: { type: 'array', items: fieldIssueSchema },
    docs: { type: 'string' },
    ruleId: { type: 'string' },
    policy: { type: 'string' },
    alertSeverity: { type: 'string' },
    signal: signalSchema,
    auditId: { type: 'string' },
    approval: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        status: { type: 'string' },
        expiresAt: { type: 'string' },
      },
    },
    limit: {
      type: 'object',
      properties: {
        limitId: { type: 'string' },
        per: { type: 'string' },
        windowSeconds: { type: 'integer' },
        used: { type: 'number' },
        max: { type: 'number' },
        requested: { type: 'number' },
        resetsAt: { type: 'string' },
        retryAfterSeconds: { type: 'integer' },
      },
    },
    simulated: { type: 'boolean' },
    forwarded: { type: 'boolean' },
    response: {},
    shadow: {
      type: 'object',
      properties: {
        decision: { type: 'string' },
        reasonCode: { type: ['string', 'null'] },
        ruleId: { type: 'string' },
        policy: { type: 'string' },
        alertSeverity: { type: 'string' },
        signal: signalSchema,
        auditId: { type: 'string' },
      },
    },
  },
  required: ['decision', 'reasonCode', 'inspectionId', 'executionMode', 'enforced'],
} as const;
