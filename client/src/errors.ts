// The client's errors: a closed set, each a GatewayError with a stable `code`, so a `switch` over
// `error.code` narrows. What the gateway decided (a deny, a revoked agent, a rejected approval)
// carries the gateway's own identifiers (reasonCode, ruleId, auditId) for the developer's logs.
import type { ReasonCode } from './reason-codes.js';

export const GATEWAY_CLIENT_ERROR_CODES = [
  'GATEWAY_CONFIG_INVALID',
  'GATEWAY_DENIED',
  'AGENT_REVOKED',
  'APPROVAL_REJECTED',
  'APPROVAL_EXPIRED',
  'APPROVAL_TIMEOUT',
  'GATEWAY_UNAVAILABLE',
  'GATEWAY_REQUEST_FAILED',
] as const;

export type GatewayClientErrorCode = (typeof GATEWAY_CLIENT_ERROR_CODES)[number];

export class GatewayError extends Error {
  readonly code: GatewayClientErrorCode;

  constructor(code: GatewayClientErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The configuration is unusable; `field` names the option that is wrong. */
export class GatewayConfigError extends GatewayError {
  readonly field: string;

  constructor(field: string, problem: string) {
    super('GATEWAY_CONFIG_INVALID', `${field} ${problem}`);
    this.field = field;
  }
}

export interface DenialDetails {
  readonly reasonCode: ReasonCode | (string & {});
  readonly ruleId?: string | undefined;
  readonly policy?: string | undefined;
  readonly auditId?: string | undefined;
  readonly inspectionId: string;
  readonly message?: string | undefined;
}

/** The gateway denied the call: the tool did not run. */
export class GatewayDenied extends GatewayError {
  /**
   * The gateway's code (docs/errors.md). A code of the registry this client was built with, or
   * one a newer gateway added, passed on as sent: `(string & {})` keeps the type open without
   * losing completion of the known codes (reason-codes.ts).
   */
  readonly reasonCode: ReasonCode | (string & {});
  readonly ruleId: string | undefined;
  readonly policy: string | undefined;
  readonly auditId: string | undefined;
  readonly inspectionId: string;

  constructor(details: DenialDetails) {
    super(
      'GATEWAY_DENIED',
      details.message ?? `the gateway denied the call: ${details.reasonCode}`,
    );
    this.reasonCode = details.reasonCode;
    this.ruleId = details.ruleId;
    this.policy = details.policy;
    this.auditId = details.auditId;
    this.inspectionId = details.inspectionId;
  }
}

/** The agent was killed: every later call of this client fails at once, without a request. */
export class AgentRevoked extends GatewayError {
  readonly agentId: string;
  readonly auditId: string | undefined;

  constructor(agentId: string, auditId: string | undefined) {
    super('AGENT_REVOKED', `agent ${agentId} is revoked (killed): the run must stop`);
    this.agentId = agentId;
    this.auditId = auditId;
  }
}

/** An operator rejected the held call. */
export class ApprovalRejected extends GatewayError {
  readonly approvalId: string;
  readonly reason: string | null;

  constructor(approvalId: string, reason: string | null) {
    super('APPROVAL_REJECTED', `approval ${approvalId} was rejected${reason ? `: ${reason}` : ''}`);
    this.approvalId = approvalId;
    this.reason = reason;
  }
}

/** Nobody decided the held call before the approval expired on the gateway. */
export class ApprovalExpired extends GatewayError {
  readonly approvalId: string;

  constructor(approvalId: string) {
    super('APPROVAL_EXPIRED', `approval ${approvalId} expired before it was decided`);
    this.approvalId = approvalId;
  }
}

/** The client stopped waiting (approvalTimeoutMs); the approval may still be decided later. */
export class ApprovalTimeout extends GatewayError {
  readonly approvalId: string;

  constructor(approvalId: string, timeoutMs: number) {
    super('APPROVAL_TIMEOUT', `approval ${approvalId} was not decided within ${timeoutMs} ms`);
    this.approvalId = approvalId;
  }
}

/** The gateway could not be reached, timed out, or kept answering 429/503 after every retry. */
export class GatewayUnavailable extends GatewayError {
  /** The last HTTP status; 0 when no answer arrived (network failure, timeout). */
  readonly status: number;
  readonly attempts: number;

  constructor(status: number, attempts: number, options?: { cause?: unknown }) {
    super(
      'GATEWAY_UNAVAILABLE',
      status === 0
        ? `the gateway did not answer (${attempts} attempt${attempts === 1 ? '' : 's'})`
        : `the gateway answered ${status} after ${attempts} attempt${attempts === 1 ? '' : 's'}`,
      options,
    );
    this.status = status;
    this.attempts = attempts;
  }
}

/** One problem of a refused request, as the gateway's error body lists it in `issues`. */
export interface FieldIssue {
  /** The field by its path in the request (`persona.tone`, `allowed_tools.3`; `(body)`). */
  readonly field: string;
  /** What is wrong with it, in plain words (`is required`). */
  readonly message: string;
}

/** What the gateway's error body says besides its code and message. */
export interface ErrorBodyDetails {
  readonly hint?: string | undefined;
  readonly issues?: readonly FieldIssue[] | undefined;
  readonly docs?: string | undefined;
}

/** Any other unexpected answer (a bad API key, a missing scope, an unknown approval…). */
export class GatewayRequestError extends GatewayError {
  readonly status: number;
  readonly reasonCode: string | null;
  /** The gateway's hint: what to do about it. */
  readonly hint: string | undefined;
  /** A validation refusal: every problem of the request; empty otherwise. */
  readonly issues: readonly FieldIssue[];
  /** The documentation page of the request (`docs/spawn.md#request`), when the gateway names one. */
  readonly docs: string | undefined;

  constructor(
    status: number,
    reasonCode: string | null,
    message?: string,
    details: ErrorBodyDetails = {},
  ) {
    super(
      'GATEWAY_REQUEST_FAILED',
      message ?? `the gateway answered ${status}${reasonCode ? ` ${reasonCode}` : ''}`,
    );
    this.status = status;
    this.reasonCode = reasonCode;
    this.hint = details.hint;
    this.issues = details.issues ?? [];
    this.docs = details.docs;
  }

  /** The error of a gateway error body `{ reasonCode, message, hint, issues, docs }`. */
  static fromBody(status: number, body: Readonly<Record<string, unknown>>): GatewayRequestError {
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const issues = Array.isArray(body.issues)
      ? body.issues.filter(
          (issue): issue is FieldIssue =>
            typeof issue === 'object' &&
            issue !== null &&
            typeof (issue as FieldIssue).field === 'string' &&
            typeof (issue as FieldIssue).message === 'string',
        )
      : undefined;
    return new GatewayRequestError(status, text(body.reasonCode) ?? null, text(body.message), {
      hint: text(body.hint),
      issues,
      docs: text(body.docs),
    });
  }
}
