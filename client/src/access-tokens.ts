// Access tokens for the agent's own OAuth client: the client_credentials grant (RFC 6749 §4.4)
// with one RFC 8707 `resource`, at the gateway's token endpoint, authenticated with the client
// secret from configuration (client_secret_basic, id and secret form-url-encoded first as RFC
// 6749 §2.3.1 asks). The client id comes from the agent's identity material: the unrevoked
// client whose audiences hold the resource. A token is cached per resource until shortly before
// it expires; concurrent callers share one request. Errors say what the token endpoint said.
import type { ResolvedConfig } from './config.js';
import {
  AgentRevoked,
  GatewayConfigError,
  GatewayRequestError,
  GatewayUnavailable,
} from './errors.js';
import { type IdentityCache, untilAborted } from './identity.js';

export const TOKEN_PATH = '/oauth/token';
/** A cached token is renewed this long before it expires. */
export const TOKEN_RENEW_MARGIN_MS = 30_000;

interface CachedToken {
  readonly token: string;
  readonly renewAt: number;
}

export class AccessTokens {
  readonly #cached = new Map<string, CachedToken>();
  readonly #pending = new Map<string, Promise<string>>();

  constructor(
    private readonly config: ResolvedConfig,
    private readonly identity: IdentityCache,
  ) {}

  get(resource: string, signal?: AbortSignal): Promise<string> {
    const cached = this.#cached.get(resource);
    if (cached !== undefined && Date.now() < cached.renewAt) return Promise.resolve(cached.token);
    // One request shared by every caller, bounded by timeoutMs; a caller's abort only ends its wait.
    let pending = this.#pending.get(resource);
    if (pending === undefined) {
      pending = this.#request(resource).finally(() => this.#pending.delete(resource));
      this.#pending.set(resource, pending);
    }
    return signal === undefined ? pending : untilAborted(pending, signal);
  }

  async #request(resource: string): Promise<string> {
    const { config } = this;
    if (config.clientSecret === undefined) {
      throw new GatewayConfigError('clientSecret', 'is required to request access tokens');
    }
    const material = await this.identity.get();
    if (material.status === 'killed') throw new AgentRevoked(material.agentId, undefined);
    const client = material.oauthClients.find((candidate) =>
      candidate.audiences.includes(resource),
    );
    if (client === undefined) {
      throw new GatewayRequestError(
        0,
        null,
        `the agent has no OAuth client for ${resource} (its clients' audiences: ${material.oauthClients.flatMap((c) => c.audiences).join(', ') || 'none'})`,
      );
    }
    const basic = btoa(
      `${encodeURIComponent(client.clientId)}:${encodeURIComponent(config.clientSecret)}`,
    );
    let response: Response;
    try {
      response = await config.fetch(`${config.baseUrl}${TOKEN_PATH}`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource }).toString(),
        signal: AbortSignal.timeout(config.timeoutMs),
      });
    } catch (error) {
      throw new GatewayUnavailable(0, 1, { cause: error });
    }
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (response.status !== 200 || typeof body.access_token !== 'string') {
      const error = typeof body.error === 'string' ? body.error : null;
      const description =
        typeof body.error_description === 'string' ? `: ${body.error_description}` : '';
      throw new GatewayRequestError(
        response.status,
        error,
        `the token endpoint answered ${response.status}${error ? ` ${error}` : ''}${description}`,
      );
    }
    const lifetimeMs = typeof body.expires_in === 'number' ? body.expires_in * 1000 : 0;
    this.#cached.set(resource, {
      token: body.access_token,
      renewAt: Date.now() + Math.max(lifetimeMs - TOKEN_RENEW_MARGIN_MS, 0),
    });
    return body.access_token;
  }
}
