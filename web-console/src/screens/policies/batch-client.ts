// The public compliance batch endpoint (docs/compliance-batch.md), same origin as the console and
// without authentication: it checks a draft policy and evaluates sample calls against it without
// publishing anything. Only the fields the screen reads are typed here.

export const BATCH_PATH = '/api/v1/public/compliance/validate/batch';

/** A problem or warning of the engine; `source` is the 1-based position in the policy text. */
export interface PolicyIssue {
  readonly code: string;
  readonly message: string;
  readonly path: string;
  readonly hint?: string | null;
  readonly line?: number | null;
  readonly column?: number | null;
  readonly source?: { readonly line: number; readonly column: number } | null;
}

export type NplAction = 'ALLOW' | 'BLOCK' | 'REQUIRE_HUMAN' | 'SIMULATE';

export interface BatchDecision {
  readonly tool: string;
  readonly action: NplAction;
  readonly ruleId: string;
  readonly matched: boolean;
  readonly reason: string;
  readonly alertSeverity: string;
}

export interface BatchItem {
  readonly valid: boolean;
  readonly policyUri?: string;
  readonly contentHash?: string;
  readonly errors: readonly PolicyIssue[];
  readonly warnings: readonly PolicyIssue[];
  readonly decisions: readonly BatchDecision[];
}

export interface SampleCall {
  readonly tool_name: string;
  readonly arguments?: Record<string, unknown>;
  readonly agent_role?: string;
  readonly context?: Record<string, unknown>;
}

/** A refusal of the endpoint itself (rate limit, size), in the registry's terms. */
export class BatchRequestError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'BatchRequestError';
    this.code = code;
  }
}

/** Checks one policy text and decides the calls against it (none: only the check). */
export async function checkPolicy(
  policy: string,
  calls: readonly SampleCall[],
  signal?: AbortSignal,
): Promise<BatchItem> {
  const response = await fetch(BATCH_PATH, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ policy, tool_calls: calls }] }),
    signal: signal ?? null,
  });
  const body = (await response.json().catch(() => null)) as {
    items?: BatchItem[];
    reasonCode?: string;
    message?: string;
  } | null;
  const item = body?.items?.[0];
  if (!response.ok || !item) {
    throw new BatchRequestError(
      body?.reasonCode ?? `HTTP_${response.status}`,
      body?.message ?? `the policy check answered ${response.status}`,
    );
  }
  return item;
}
