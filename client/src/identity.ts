// The agent's public identity material, read from GET /api/v1/agents/{agentId}/identity and
// cached: refreshed when its credential is about to expire (REFRESH_MARGIN_MS before
// credentialExpiresAt) and at least every MAX_AGE_MS, so a newly issued or revoked credential is
// seen without a restart. Concurrent callers share one request. Secrets never come from here.
import type { ResolvedConfig } from './config.js';
import { GatewayRequestError } from './errors.js';
import type { HttpSend } from './http.js';

export interface AgentOAuthClient {
  readonly clientId: string;
  readonly tokenEndpointAuthMethod: string;
  readonly audiences: readonly string[];
}

export interface AgentIdentityMaterial {
  readonly agentId: string;
  readonly did: string | null;
  /** z6Mk… multibase Ed25519 key registered for the agent. */
  readonly publicKey: string | null;
  readonly status: string;
  readonly allowedTools: readonly string[];
  readonly mcpAudiences: readonly string[];
  /** The newest unrevoked, unexpired identity credential as issued, or null. */
  readonly credential: Record<string, unknown> | null;
  readonly credentialId: string | null;
  readonly credentialExpiresAt: string | null;
  readonly oauthClients: readonly AgentOAuthClient[];
  readonly killedAt: string | null;
}

/** Refresh this long before the credential expires. */
export const REFRESH_MARGIN_MS = 60_000;
/** Re-read at least this often (a credential issued or revoked meanwhile). */
export const MAX_AGE_MS = 5 * 60_000;

export class IdentityCache {
  #material: AgentIdentityMaterial | undefined;
  #refreshAt = 0;
  #pending: Promise<AgentIdentityMaterial> | undefined;

  constructor(
    private readonly config: ResolvedConfig,
    private readonly send: HttpSend,
  ) {}

  get(signal?: AbortSignal): Promise<AgentIdentityMaterial> {
    if (this.#material !== undefined && Date.now() < this.#refreshAt) {
      return Promise.resolve(this.#material);
    }
    // One read shared by every caller, bounded by timeoutMs; a caller's abort only ends its wait.
    this.#pending ??= this.#fetch().finally(() => {
      this.#pending = undefined;
    });
    return signal === undefined ? this.#pending : untilAborted(this.#pending, signal);
  }

  async #fetch(): Promise<AgentIdentityMaterial> {
    const answer = await this.send({
      method: 'GET',
      path: `/api/v1/agents/${encodeURIComponent(this.config.agentId)}/identity`,
    });
    if (answer.status !== 200) {
      throw GatewayRequestError.fromBody(answer.status, answer.body);
    }
    const material = answer.body as unknown as AgentIdentityMaterial;
    const now = Date.now();
    const expires =
      material.credentialExpiresAt === null ? Number.NaN : Date.parse(material.credentialExpiresAt);
    this.#refreshAt = Number.isNaN(expires)
      ? now + MAX_AGE_MS
      : Math.min(now + MAX_AGE_MS, expires - REFRESH_MARGIN_MS);
    this.#material = material;
    this.config.logger.debug?.(
      { agentId: material.agentId, credentialId: material.credentialId },
      'agent identity read',
    );
    return material;
  }
}

/** `promise` for one caller, who stops waiting (with the signal's reason) when `signal` fires. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
