// API-key authentication of a control-plane REST route: an onRequest hook that authenticates
// the key the way GraphQL does (the injected `authenticate`), demands one scope, and keeps the
// caller for the handler. Runs before the body is read, so an unauthenticated request costs
// no parsing.
import type { FastifyRequest } from 'fastify';
import { markRefusal } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import type { Scope } from '../../shared/identity/scopes.js';
import type { Caller } from '../graphql/context.js';

export interface ScopedCaller {
  onRequest(request: FastifyRequest): Promise<void>;
  /** The caller onRequest authenticated for this request. */
  callerOf(request: FastifyRequest): Caller;
}

export function scopedCaller(
  authenticate: (authorization: string | undefined) => Caller,
  scope: Scope,
): ScopedCaller {
  const callers = new WeakMap<FastifyRequest, Caller>();
  return {
    async onRequest(request) {
      const caller = authenticate(request.headers.authorization);
      if (!caller.scopes.has(scope)) {
        const error = gatewayError(
          'AUTH_INSUFFICIENT_SCOPE',
          { scope },
          { details: { requiredScope: scope } },
        );
        // Audited at the edge (http-edge/refusals.ts), bounded.
        throw markRefusal(error, {
          tenantId: caller.tenantId,
          subjectType: 'api_key',
          subject: caller.keyId,
        });
      }
      callers.set(request, caller);
    },
    callerOf(request) {
      return callers.get(request) as Caller;
    },
  };
}
