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
import { type RefusalSubject, refusalSubjectOf } from '../shared/audit/index.js';
import { GatewayError } from '../shared/errors/index.js';
import type { RefusalAuditor } from './refusal-auditor.js';

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
