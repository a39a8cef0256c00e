// Whom the data plane's refusals name, for the edge's refusal auditing (http-edge/refusals.ts):
// an agent (a proxy caller, a session's agent) or an OAuth client the index knows. Only a refusal
// whose tenant is known is audited, so an unknown client is never a subject.
import type { FastifyRequest } from 'fastify';
import { auditRefusal } from '../http-edge/refusals.js';
import { markRefusal, type RefusalSubject } from '../shared/audit/index.js';
import { GatewayError } from '../shared/errors/index.js';

/** The subject of a refusal of an agent (a proxy caller, a session's agent). */
export function refusedAgent(caller: {
  readonly tenantId: string;
  readonly agentId: string;
}): RefusalSubject {
  return { tenantId: caller.tenantId, subjectType: 'agent', subject: caller.agentId };
}

/** The subject of a refusal of a known OAuth client. */
export function refusedClient(found: {
  readonly tenant: { readonly id: string };
  readonly client: { readonly id: string };
}): RefusalSubject {
  return { tenantId: found.tenant.id, subjectType: 'oauth_client', subject: found.client.id };
}

/**
 * Marks an `invalid_client` refusal (or the failure limiter's 429) of a client the index knows
 * (its tenant is known) for the edge to audit; an unknown client id, or another refusal, is left
 * unmarked.
 */
export function markClientRefusal(
  error: unknown,
  found:
    | { readonly tenant: { readonly id: string }; readonly client: { readonly id: string } }
    | undefined,
): void {
  if (found === undefined || !(error instanceof GatewayError)) return;
  if (error.code === 'OAUTH_INVALID_CLIENT' || error.code === 'OAUTH_RATE_LIMITED')
    markRefusal(error, refusedClient(found));
}

/**
 * An authorization request of a known client answered `access_denied` (a killed or unknown agent,
 * a credential or proof that does not verify, a replayed proof): audited under the client.
 */
export function auditAccessDenied(
  request: FastifyRequest,
  found: { readonly tenant: { readonly id: string }; readonly client: { readonly id: string } },
  failure: { readonly code?: string | undefined; readonly message?: string | undefined },
): Promise<string | undefined> {
  const code = failure.code ?? 'OAUTH_INVALID_GRANT';
  return auditRefusal(request, refusedClient(found), code, `access_denied: ${failure.message}`);
}
