// The client's configuration (spec §2.7): what it is, and its validation up front, once. A wrong
// option is a GatewayConfigError naming it, thrown by createGatewayClient, never a failure on the
// first call. Defaults are filled here so the rest of the client reads one normalized shape.
import { GatewayConfigError } from './errors.js';

export const EXECUTION_MODES = ['production', 'simulation', 'shadow'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

/**
 * An Ed25519 private key as a JWK (RFC 8037): kty OKP, crv Ed25519, x and d base64url. Declared
 * here because JsonWebKey is a DOM type, not in every runtime's type library; a DOM JsonWebKey
 * fits it.
 */
export interface Ed25519PrivateJwk {
  readonly kty?: string;
  readonly crv?: string;
  readonly x?: string;
  readonly d?: string;
  readonly kid?: string;
  readonly alg?: string;
}

export interface GatewayLogger {
  debug?(object: object, message?: string): void;
  info?(object: object, message?: string): void;
  warn?(object: object, message?: string): void;
}

/** A sub-agent's delegation: the root identity credential and the links down to this agent. */
export interface DelegationConfig {
  readonly rootCredential: Record<string, unknown>;
  readonly chain: readonly Record<string, unknown>[];
}

export interface GatewayClientConfig {
  readonly tenantId: string;
  readonly agentId: string;
  /** An API key with scope agents:execute. */
  readonly apiKey: string;
  /** The gateway's URL, e.g. http://localhost:8080 (http or https, no query or fragment). */
  readonly baseUrl: string;
  /** A pinned policy `svc://name@1.2.3`, sent with every inspection. */
  readonly policy: string;
  /** Default production. */
  readonly executionMode?: ExecutionMode;
  /** The server of every tool without an entry in `servers`. */
  readonly serverId?: string;
  /** Tool name → server id. */
  readonly servers?: Readonly<Record<string, string>>;
  /** Per HTTP request; default 10 000. */
  readonly timeoutMs?: number;
  /** How long a held call waits for a decision; default 120 000. */
  readonly approvalTimeoutMs?: number;
  /** Retries on 429 and 503 only; default 3. */
  readonly retries?: number;
  /** The agent's Ed25519 private key (OKP JWK with `d`): enables credential + Agent-Proof. */
  readonly privateKeyJwk?: Ed25519PrivateJwk;
  /**
   * The agent's OAuth client secret (spawn's `oauth.client_secret`): `accessToken(resource)` uses it
   * at the token endpoint; never sent to inspect.
   */
  readonly clientSecret?: string;
  /** For a sub-agent: the chain it presents (see the /delegation export). */
  readonly delegation?: DelegationConfig;
  /**
   * The gateway's public URL as it signs Agent-Proofs against (AGENT_GATEWAY_PUBLIC_URL);
   * default baseUrl. Differs only behind a proxy that rewrites the host.
   */
  readonly publicUrl?: string;
  readonly logger?: GatewayLogger;
  readonly fetch?: typeof fetch;
}

export interface ResolvedConfig {
  readonly tenantId: string;
  readonly agentId: string;
  readonly apiKey: string;
  /** Without a trailing slash. */
  readonly baseUrl: string;
  readonly publicUrl: string;
  readonly policy: string;
  readonly executionMode: ExecutionMode;
  readonly serverId: string | undefined;
  readonly servers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly approvalTimeoutMs: number;
  readonly retries: number;
  readonly privateKeyJwk: Ed25519PrivateJwk | undefined;
  readonly clientSecret: string | undefined;
  readonly delegation: DelegationConfig | undefined;
  readonly logger: GatewayLogger;
  readonly fetch: typeof fetch;
}

/** svc://kebab-name@MAJOR.MINOR.PATCH, as the gateway reads it: never a range, a tag or latest. */
const PINNED_POLICY =
  /^svc:\/\/[a-z0-9]+(?:-[a-z0-9]+)*@(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)$/;

const NO_LOGGER: GatewayLogger = Object.freeze({});

export function resolveConfig(config: GatewayClientConfig): ResolvedConfig {
  if (typeof config !== 'object' || config === null) {
    throw new GatewayConfigError('config', 'must be an object');
  }
  const tenantId = requiredString(config, 'tenantId');
  const agentId = requiredString(config, 'agentId');
  const apiKey = requiredString(config, 'apiKey');
  const baseUrl = httpUrl(config.baseUrl, 'baseUrl');
  const publicUrl =
    config.publicUrl === undefined ? baseUrl : httpUrl(config.publicUrl, 'publicUrl');
  const policy = pinnedPolicy(config.policy);
  const executionMode = config.executionMode ?? 'production';
  if (!(EXECUTION_MODES as readonly string[]).includes(executionMode)) {
    throw new GatewayConfigError('executionMode', `must be one of ${EXECUTION_MODES.join(', ')}`);
  }
  if (config.serverId !== undefined) requiredString(config, 'serverId');
  const servers = config.servers ?? {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new GatewayConfigError('servers', 'must be an object of tool name → server id');
  }
  for (const [tool, server] of Object.entries(servers)) {
    if (typeof server !== 'string' || server.length === 0) {
      throw new GatewayConfigError(`servers.${tool}`, 'must be a non-empty server id');
    }
  }
  const privateKeyJwk = config.privateKeyJwk;
  if (privateKeyJwk !== undefined) checkPrivateKey(privateKeyJwk);
  if (config.clientSecret !== undefined) requiredString(config, 'clientSecret');
  const delegation = config.delegation;
  if (delegation !== undefined) {
    if (typeof delegation?.rootCredential !== 'object' || delegation.rootCredential === null) {
      throw new GatewayConfigError(
        'delegation.rootCredential',
        'must be the root credential object',
      );
    }
    if (!Array.isArray(delegation.chain)) {
      throw new GatewayConfigError(
        'delegation.chain',
        'must be an array of delegation credentials',
      );
    }
    if (privateKeyJwk === undefined) {
      throw new GatewayConfigError(
        'privateKeyJwk',
        'is required with delegation (the Agent-Proof)',
      );
    }
  }
  const fetchImpl = config.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') {
    throw new GatewayConfigError('fetch', 'must be a fetch function (none is global here)');
  }
  return {
    tenantId,
    agentId,
    apiKey,
    baseUrl,
    publicUrl,
    policy,
    executionMode,
    serverId: config.serverId,
    servers,
    timeoutMs: positive(config.timeoutMs, 'timeoutMs', 10_000),
    approvalTimeoutMs: positive(config.approvalTimeoutMs, 'approvalTimeoutMs', 120_000),
    retries: count(config.retries, 'retries', 3),
    privateKeyJwk,
    clientSecret: config.clientSecret,
    delegation,
    logger: config.logger ?? NO_LOGGER,
    fetch: config.fetch ?? fetchImpl.bind(globalThis),
  };
}

function requiredString(config: object, field: string): string {
  const value = (config as Record<string, unknown>)[field];
  if (typeof value !== 'string' || value.trim().length === 0) {
    throw new GatewayConfigError(field, 'is required (a non-empty string)');
  }
  return value;
}

function httpUrl(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new GatewayConfigError(
      field,
      'is required (the gateway URL, e.g. http://localhost:8080)',
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new GatewayConfigError(field, `is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GatewayConfigError(field, `must be an http or https URL, not ${url.protocol}`);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new GatewayConfigError(field, 'must not carry credentials, a query or a fragment');
  }
  return url.href.replace(/\/+$/, '');
}

function pinnedPolicy(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new GatewayConfigError('policy', 'is required: a pinned policy svc://name@1.2.3');
  }
  if (!PINNED_POLICY.test(value)) {
    throw new GatewayConfigError(
      'policy',
      `must be pinned to an exact version, svc://name@1.2.3 (not a range, a tag or a bare name): ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function checkPrivateKey(jwk: Ed25519PrivateJwk): void {
  if (typeof jwk !== 'object' || jwk === null) {
    throw new GatewayConfigError('privateKeyJwk', 'must be an Ed25519 private JWK object');
  }
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') {
    throw new GatewayConfigError('privateKeyJwk', 'must be an Ed25519 key (kty OKP, crv Ed25519)');
  }
  for (const member of ['x', 'd'] as const) {
    const value = jwk[member];
    if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(value)) {
      throw new GatewayConfigError(
        `privateKeyJwk.${member}`,
        'must be 32 bytes of base64url (a private JWK has both x and d)',
      );
    }
  }
}

function positive(value: unknown, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new GatewayConfigError(field, 'must be a positive number of milliseconds');
  }
  return value;
}

function count(value: unknown, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 10) {
    throw new GatewayConfigError(field, 'must be an integer from 0 to 10');
  }
  return value;
}
