// What the OAuth endpoints work with: one object built by the plugin, passed to each handler.
// `authenticate` reads the request's parameters and authenticates its client against the
// current snapshot's index (one index per snapshot, oauth-index.ts); the client of a killed agent
// is refused like a revoked one.
import type { FastifyRequest } from 'fastify';
import { markRefusal } from '../../../shared/audit/index.js';
import { gatewayError } from '../../../shared/errors/index.js';
import type { PublicUrl } from '../../../shared/public-url.js';
import type { GatewayMetrics } from '../../metrics/gateway-metrics.js';
import type { ClientAuthenticator } from '../../oauth/client-auth.js';
import type { IssuedTokenRecorder } from '../../oauth/issued-tokens.js';
import { type IndexedClient, type OAuthIndex, oauthIndexOf } from '../../oauth/oauth-index.js';
import { type OAuthParams, toOAuthParams } from '../../oauth/request-params.js';
import type { TokenSigner } from '../../oauth/token-signer.js';
import { refusedClient } from '../../refusal-subjects.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { TOKEN_PATH } from './discovery.js';

export interface OAuthContext {
  readonly store: SnapshotStore;
  readonly metrics: Pick<GatewayMetrics, 'oauthTokensIssued'> | undefined;
  readonly signer: TokenSigner | undefined;
  readonly issuedTokens: Pick<IssuedTokenRecorder, 'record'> | undefined;
  issuer(): string;
  index(): OAuthIndex;
  authenticate(
    request: FastifyRequest,
  ): Promise<{ index: OAuthIndex; params: OAuthParams; client: IndexedClient }>;
}

export function createOAuthContext(deps: {
  readonly store: SnapshotStore;
  readonly publicUrl: PublicUrl;
  readonly signer: TokenSigner | undefined;
  readonly issuedTokens: Pick<IssuedTokenRecorder, 'record'> | undefined;
  readonly metrics:
    | Pick<GatewayMetrics, 'oauthTokensIssued' | 'oauthClientAuthFailures'>
    | undefined;
  readonly clients: ClientAuthenticator;
}): OAuthContext {
  const index = () => oauthIndexOf(deps.store.current, deps.signer);
  const issuer = () => deps.publicUrl.get();
  return {
    store: deps.store,
    signer: deps.signer,
    issuedTokens: deps.issuedTokens,
    metrics: deps.metrics,
    issuer,
    index,
    async authenticate(request) {
      const params = toOAuthParams(request.body);
      const current = index();
      const base = issuer();
      try {
        const client = await deps.clients.authenticate(current, {
          authorization: request.headers.authorization,
          params,
          address: request.ip,
          endpointUrl: `${base}${request.url.split('?')[0]}`,
          tokenEndpointUrl: `${base}${TOKEN_PATH}`,
          issuer: base,
        });
        // A killed agent's clients are revoked (the kill switch), even before the snapshot
        // without them arrives: the agent reads killed at once (the store's kill overlay).
        if (client.tenant.agents.get(client.client.agentId)?.killed) {
          const error = gatewayError('OAUTH_INVALID_CLIENT', {
            problem: "the client's agent is killed",
          });
          throw markRefusal(error, refusedClient(client));
        }
        return { index: current, params, client };
      } catch (error) {
        const limited = (error as { code?: string }).code === 'OAUTH_RATE_LIMITED';
        deps.metrics?.oauthClientAuthFailures.inc({
          outcome: limited ? 'rate_limited' : 'refused',
        });
        throw error;
      }
    },
  };
}
