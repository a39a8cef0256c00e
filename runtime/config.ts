// The gateway's process configuration, read once from the environment and validated: every
// variable the README's configuration table lists, with its default. Invalid values fail the start
// with CONFIG_INVALID naming the variable, never a silent fallback.
import { resolve } from 'node:path';
import { parseMasterKey } from '../shared/crypto/seal.js';
import {
  EGRESS_ALLOW_VARIABLE,
  EGRESS_DENY_VARIABLE,
  type EgressList,
  type EgressPolicy,
  parseEgressList,
} from '../shared/egress/index.js';
import { type GatewayError, gatewayError } from '../shared/errors/index.js';

export interface GatewayConfig {
  readonly host: string;
  readonly port: number;
  /** PGlite data directory, and where the admin key file is written. */
  readonly dataDir: string;
  /** PostgreSQL server; when absent the embedded PGlite database in dataDir is used. */
  readonly databaseUrl: string | undefined;
  /** PostgreSQL schema holding the gateway's tables. */
  readonly databaseSchema: string;
  readonly logLevel: LogLevel;
  /** How long a graceful shutdown may take before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
  /** NEXUS_REQUIRE_MCP_OAUTH: every production forward carries a gateway-minted token. */
  readonly requireMcpOAuth: boolean;
  /** AGENT_GATEWAY_ACCESS_LOG: one log line per HTTP request besides the decision lines. */
  readonly accessLog: boolean;
  /** How long registering or changing an MCP server waits for its tools/list, in ms. */
  readonly toolsListWaitMs: number;
  /** Period of the refresh of every MCP server's tool definitions, in ms. */
  readonly toolsRefreshIntervalMs: number;
  /**
   * AGENT_GATEWAY_PUBLIC_URL; unset: the URL the process listens on (`start` only: the split
   * commands refuse to start without it, cli/commands/control-plane.ts requirePublicUrl).
   */
  readonly publicUrl: string | undefined;
  /**
   * AGENT_GATEWAY_MASTER_KEY (32 bytes), which seals the tenant CA keys; unset: the key file in
   * dataDir (runtime/master-key.ts). Only processes that sign (start, control-plane) use it.
   */
  readonly masterKey: Buffer | undefined;
  /** AGENT_GATEWAY_STREAM_HEARTBEAT_MS: the configuration stream's heartbeat (both planes agree). */
  readonly streamHeartbeatMs: number;
  /**
   * AGENT_GATEWAY_STARTUP_SNAPSHOT_WAIT_MS: how long a starting data plane waits for the control
   * plane's current configuration before it serves its persisted snapshot.
   */
  readonly startupSnapshotWaitMs: number;
  /** AGENT_GATEWAY_KILL_ACK_WAIT_MS: how long a kill waits for the data planes' acknowledgements. */
  readonly killAckWaitMs: number;
  /** AGENT_GATEWAY_MCP_SESSION_CONCURRENCY / _AGENT_CONCURRENCY: MCP proxy calls in flight. */
  readonly mcpSessionConcurrency: number;
  readonly mcpAgentConcurrency: number;
  /** AGENT_GATEWAY_MCP_MAX_MESSAGE_BYTES: largest body the MCP proxy reads. */
  readonly mcpMaxMessageBytes: number;
  /** AGENT_GATEWAY_EGRESS_ALLOW / _DENY: the egress policy of every upstream connection. */
  readonly egress: EgressPolicy;
}

export const MASTER_KEY_VARIABLE = 'AGENT_GATEWAY_MASTER_KEY';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Every setting, for `--help` and the README: name, default, meaning. */
export const CONFIG_VARIABLES = [
  ['AGENT_GATEWAY_HOST', '127.0.0.1', 'Address to listen on (0.0.0.0 for all interfaces).'],
  ['AGENT_GATEWAY_PORT', '8080', 'Port to listen on (0 picks a free one).'],
  ['AGENT_GATEWAY_DATA_DIR', './data', 'Embedded database and the admin key file.'],
  ['DATABASE_URL', '(unset)', 'PostgreSQL connection string; unset uses the embedded database.'],
  ['AGENT_GATEWAY_DB_SCHEMA', 'public', 'PostgreSQL schema holding the tables.'],
  ['AGENT_GATEWAY_LOG_LEVEL', 'info', 'fatal, error, warn, info, debug, trace or silent.'],
  ['AGENT_GATEWAY_SHUTDOWN_TIMEOUT_MS', '10000', 'Longest graceful shutdown before exiting.'],
  [
    'AGENT_GATEWAY_ACCESS_LOG',
    'false',
    'true: also log every HTTP request (inspect decisions are logged either way; allows at debug).',
  ],
  [
    'AGENT_GATEWAY_TOOLS_LIST_WAIT_MS',
    '2000',
    'How long registering or changing an MCP server waits for its tools/list (then learnt in the background).',
  ],
  [
    'AGENT_GATEWAY_TOOLS_REFRESH_INTERVAL_MS',
    '300000',
    "Period of the refresh of every MCP server's tool definitions (annotations such as destructiveHint).",
  ],
  [
    'AGENT_GATEWAY_PUBLIC_URL',
    '(the listening URL)',
    'Public base URL of the gateway: the OAuth issuer, status-list URLs in credentials, the htu of agent proofs. Required behind a proxy; control-plane and data-plane refuse to start without it (the same on every process).',
  ],
  [
    MASTER_KEY_VARIABLE,
    '(<data dir>/master-key)',
    'Master key sealing the tenant CA keys: 32 bytes as 64 hex digits or 43 base64url characters. Unset: a key file made (mode 0600) on first start. The same value on every control plane; losing it loses the CA keys.',
  ],
  [
    'AGENT_GATEWAY_KILL_ACK_WAIT_MS',
    '250',
    "How long a kill waits for the data planes' acknowledgements before it answers (the answer's propagation names who confirmed).",
  ],
  [
    'AGENT_GATEWAY_MCP_SESSION_CONCURRENCY',
    '32',
    'MCP proxy: calls in flight per session; more are refused 429 MCP_CONCURRENCY_LIMIT.',
  ],
  [
    'AGENT_GATEWAY_MCP_AGENT_CONCURRENCY',
    '128',
    'MCP proxy: calls in flight per agent, across its sessions on this data plane.',
  ],
  [
    'AGENT_GATEWAY_MCP_MAX_MESSAGE_BYTES',
    '4194304',
    'MCP proxy: largest request body (413 beyond) and largest upstream message.',
  ],
  [
    'AGENT_GATEWAY_STREAM_HEARTBEAT_MS',
    '15000',
    'Heartbeat of the configuration stream; a data plane treats three missed ones as a lost stream. The same on every process.',
  ],
  [
    'AGENT_GATEWAY_STARTUP_SNAPSHOT_WAIT_MS',
    '5000',
    "Data plane: how long it waits at start for the control plane's current configuration (refusing requests 503 DATA_PLANE_NOT_READY) before it serves its persisted snapshot.",
  ],
  [
    EGRESS_ALLOW_VARIABLE,
    '(unset)',
    'Comma-separated CIDRs and host names (*.example.com) upstreams may be reached at besides the defaults; an exact address releases a never-contacted one (169.254.169.254). docs/security.md, Egress.',
  ],
  [
    EGRESS_DENY_VARIABLE,
    '(unset)',
    'Comma-separated CIDRs and host names upstreams are never reached at; wins over everything (e.g. 10.0.0.0/8,127.0.0.0/8 to close private ranges).',
  ],
  [
    'NEXUS_REQUIRE_MCP_OAUTH',
    'false',
    'true: every production forward must carry a gateway-minted access token.',
  ],
] as const;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const logLevel = env.AGENT_GATEWAY_LOG_LEVEL || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw invalid('AGENT_GATEWAY_LOG_LEVEL', logLevel, `one of ${LOG_LEVELS.join(', ')}`);
  }
  const schema = env.AGENT_GATEWAY_DB_SCHEMA || 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw invalid('AGENT_GATEWAY_DB_SCHEMA', schema, 'a lower-case SQL identifier');
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw invalid('DATABASE_URL', '(hidden)', 'a postgresql:// connection string');
  }
  const publicUrl = env.AGENT_GATEWAY_PUBLIC_URL || undefined;
  if (publicUrl !== undefined && !isHttpBaseUrl(publicUrl)) {
    throw invalid(
      'AGENT_GATEWAY_PUBLIC_URL',
      publicUrl,
      'an http(s) URL without query or fragment',
    );
  }
  const masterKeyText = env[MASTER_KEY_VARIABLE] || undefined;
  const masterKey =
    masterKeyText === undefined ? undefined : parseMasterKey(masterKeyText, MASTER_KEY_VARIABLE);
  return {
    host: env.AGENT_GATEWAY_HOST || '127.0.0.1',
    port: integer(env, 'AGENT_GATEWAY_PORT', 8080, 0, 65_535),
    dataDir: resolve(env.AGENT_GATEWAY_DATA_DIR || './data'),
    databaseUrl,
    databaseSchema: schema,
    logLevel: logLevel as LogLevel,
    shutdownTimeoutMs: integer(env, 'AGENT_GATEWAY_SHUTDOWN_TIMEOUT_MS', 10_000, 100, 600_000),
    requireMcpOAuth: boolean(env, 'NEXUS_REQUIRE_MCP_OAUTH'),
    accessLog: boolean(env, 'AGENT_GATEWAY_ACCESS_LOG'),
    toolsListWaitMs: integer(env, 'AGENT_GATEWAY_TOOLS_LIST_WAIT_MS', 2_000, 0, 60_000),
    toolsRefreshIntervalMs: integer(
      env,
      'AGENT_GATEWAY_TOOLS_REFRESH_INTERVAL_MS',
      300_000,
      1_000,
      86_400_000,
    ),
    publicUrl,
    masterKey,
    streamHeartbeatMs: integer(env, 'AGENT_GATEWAY_STREAM_HEARTBEAT_MS', 15_000, 10, 600_000),
    startupSnapshotWaitMs: integer(
      env,
      'AGENT_GATEWAY_STARTUP_SNAPSHOT_WAIT_MS',
      5_000,
      0,
      600_000,
    ),
    killAckWaitMs: integer(env, 'AGENT_GATEWAY_KILL_ACK_WAIT_MS', 250, 0, 60_000),
    mcpSessionConcurrency: integer(env, 'AGENT_GATEWAY_MCP_SESSION_CONCURRENCY', 32, 1, 10_000),
    mcpAgentConcurrency: integer(env, 'AGENT_GATEWAY_MCP_AGENT_CONCURRENCY', 128, 1, 100_000),
    mcpMaxMessageBytes: integer(
      env,
      'AGENT_GATEWAY_MCP_MAX_MESSAGE_BYTES',
      4 * 1024 * 1024,
      1024,
      64 * 1024 * 1024,
    ),
    egress: {
      allow: egressList(env, EGRESS_ALLOW_VARIABLE),
      deny: egressList(env, EGRESS_DENY_VARIABLE),
    },
  };
}

/** An egress list; the first invalid entry fails the start, named with the variable. */
function egressList(env: NodeJS.ProcessEnv, name: string): EgressList {
  const { list, problems } = parseEgressList(env[name]);
  const problem = problems[0];
  if (problem !== undefined) {
    throw gatewayError('CONFIG_INVALID', {
      setting: `${name} entry ${JSON.stringify(problem.entry)}`,
      problem: problem.problem,
    });
  }
  return list;
}

function isHttpBaseUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash;
}

function integer(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw invalid(name, text, `a whole number from ${min} to ${max}`);
  }
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string): boolean {
  const text = env[name];
  if (text === undefined || text === '' || text === 'false' || text === '0') return false;
  if (text === 'true' || text === '1') return true;
  throw invalid(name, text, 'true or false');
}

function invalid(name: string, value: string, expected: string): GatewayError {
  return gatewayError('CONFIG_INVALID', {
    setting: `${name}=${value}`,
    problem: `expected ${expected}`,
  });
}
