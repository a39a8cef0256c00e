// Refusal auditing at the HTTP edge (docs/security.md, "Refusal auditing"): an `onError` hook
// audits every thrown error that was marked with whom it refused (shared/audit/refusal-marks.ts:
// a key lacking a scope, a known client failing authentication, a session of another agent),
// through the process's RefusalAuditor, which bounds the trail. Registered at the root, so every
// route's errors pass it before their own error handler renders them, whatever their format.
// Refusals that are answered without throwing (a redirect, a JSON-RPC error on 200) call
// `auditRefusal` with the request. The hook awaits the first entry of a window (it is durable
// before the answer) and nothing else.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { markRefusal, type RefusalSubject, refusalSubjectOf } from '../../shared/audit/index.js';
import { GatewayError } from '../../shared/errors/index.js';
import type { RefusalAuditor } from '../audit/refusal-auditor.js';

declare module 'fastify' {
  interface FastifyInstance {
    refusals: Pick<RefusalAuditor, 'refuse'> | null;
  }
}

export interface RefusalsPluginOptions {
  readonly refusals?: Pick<RefusalAuditor, 'refuse'> | undefined;
}

/** `METHOD /route/:pattern`: the route, never the path an attacker chose. */
export function routeOf(request: FastifyRequest): string {
  return `${request.method} ${request.routeOptions.url ?? '(no route)'}`;
}

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

/** Audits a refusal answered without throwing; resolves with its entry id when it has one. */
export function auditRefusal(
  request: FastifyRequest,
  subject: RefusalSubject,
  code: string,
  detail: string,
): Promise<string | undefined> {
  const refusals = request.server.refusals;
  if (refusals === null) return Promise.resolve(undefined);
  return refusals.refuse({ ...subject, code, route: routeOf(request), detail });
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

export const refusalsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: RefusalsPluginOptions) => {
    const refusals = options.refusals ?? null;
    app.decorate('refusals', refusals);
    if (refusals === null) return;
    app.addHook('onError', async (request, _reply, error) => {
      const subject = refusalSubjectOf(error);
      if (subject === undefined || !(error instanceof GatewayError)) return;
      await refusals.refuse({
        ...subject,
        code: error.code,
        route: routeOf(request),
        detail: error.message,
      });
    });
  },
  { name: 'agent-gateway-refusals' },
);
