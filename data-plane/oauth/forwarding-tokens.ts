// The access token a forward carries under oauthMode mcp_as (spec §5.3): aud mcp://{serverId},
// sub the agent, client_id `gateway`, 300 s. One token per (tenant, agent, server) is cached and
// reused until half its life has passed, so the hot path signs about once per 150 s per pair and
// never waits on the database (issuance is recorded by the batched recorder). A cached token that
// was revoked (POST /oauth/revoke here, or any data plane through the snapshot) is replaced.
import type { RevokedTokenConfig } from '../../shared/snapshot/index.js';
import type { AccessTokenMinter } from '../governance/dependencies.js';
import type { IssuedTokenRecorder } from './issued-tokens.js';
import type { RevokedTokens } from './revocations.js';
import { DEFAULT_TOKEN_LIFETIME_SECONDS, type TokenSigner } from './token-signer.js';

/** The client_id of tokens the gateway mints for itself (no OAuthClient row). */
export const GATEWAY_CLIENT_ID = 'gateway';

interface CachedToken {
  readonly token: string;
  readonly jti: string;
  /** Epoch ms after which a fresh token is minted. */
  readonly renewAtMs: number;
}

/** Cache entries beyond this are dropped (oldest first) before a new one is added. */
const CACHE_CAPACITY = 10_000;

export function createForwardingTokenMinter(
  signer: TokenSigner,
  recorder: Pick<IssuedTokenRecorder, 'record'>,
  options: {
    lifetimeSeconds?: number;
    revoked?: Pick<RevokedTokens, 'has'>;
    /** Called once per token signed (not per cache hit). */
    onMinted?: () => void;
  } = {},
): AccessTokenMinter {
  const revoked = options.revoked;
  const lifetime = options.lifetimeSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS;
  const cache = new Map<string, CachedToken>();
  return async ({ tenant, agent, server }) => {
    const key = `${tenant.id}\n${agent.id}\n${server.serverId}`;
    const now = Date.now();
    const cached = cache.get(key);
    if (
      cached &&
      cached.renewAtMs > now &&
      !revoked?.has(cached.jti) &&
      !revokedJtisOf(tenant.source.revokedTokens).has(cached.jti)
    ) {
      return cached.token;
    }
    const audience = `mcp://${server.serverId}`;
    const minted = await signer.mint(
      { sub: agent.id, aud: audience, clientId: GATEWAY_CLIENT_ID, tenantId: tenant.id, scope: '' },
      lifetime,
    );
    options.onMinted?.();
    recorder.record({
      jti: minted.jti,
      tenantId: tenant.id,
      clientId: null,
      agentId: agent.id,
      audience,
      scope: '',
      issuedAt: minted.issuedAt,
      expiresAt: minted.expiresAt,
    });
    cache.delete(key);
    if (cache.size >= CACHE_CAPACITY) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    const halfLifeMs = ((minted.expiresAt - minted.issuedAt) * 1000) / 2;
    cache.set(key, {
      token: minted.token,
      jti: minted.jti,
      renewAtMs: minted.issuedAt * 1000 + halfLifeMs,
    });
    return minted.token;
  };
}

/** A tenant's revoked jtis as a Set, built once per snapshot's list. */
const revokedSets = new WeakMap<readonly RevokedTokenConfig[], ReadonlySet<string>>();
const NONE: ReadonlySet<string> = new Set();

function revokedJtisOf(list: readonly RevokedTokenConfig[] | undefined): ReadonlySet<string> {
  if (!list || list.length === 0) return NONE;
  let set = revokedSets.get(list);
  if (!set) {
    set = new Set(list.map((token) => token.jti));
    revokedSets.set(list, set);
  }
  return set;
}
