// The gateway's process configuration, read once from the environment and validated. Every
// setting is one row of SETTINGS: its variable, its default, its parser and its help text.
// loadConfig, the `--help` of the server commands and the README's configuration table are
// derived from it (runtime/config-docs.ts; tests/runtime/config-docs.test.ts compares the README).
// Invalid values fail the start with CONFIG_INVALID naming the variable, never a silent fallback.
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
import { parseWitnessKey } from '../shared/tlog/index.js';

/** One setting, written once. An empty variable counts as unset. */
export interface Setting<T> {
  /** The environment variable. */
  readonly name: string;
  /**
   * The default: `{ text }`, as an operator would write it (parsed like their value), or
   * `{ unset }`, what leaving the variable unset means, in words (markdown).
   */
  readonly default: { readonly text: string } | { readonly unset: string };
  /** What it does (markdown: the README cell; `--help` prints it as plain text). */
  readonly help: string;
  read(env: NodeJS.ProcessEnv): T;
}

/** A setting with a default value: its parser always gets text. */
function setting<T>(row: {
  name: string;
  default: string;
  parse: (text: string, name: string) => T;
  help: string;
}): Setting<T> {
  const { name, parse, help } = row;
  return {
    name,
    default: { text: row.default },
    help,
    read: (env) => parse(env[name] || row.default, name),
  };
}

/** A setting without a default value: its parser gets `undefined` when it is unset. */
function unsetByDefault<T>(row: {
  name: string;
  unset: string;
  parse: (text: string | undefined, name: string) => T;
  help: string;
}): Setting<T> {
  const { name, parse, help } = row;
  return {
    name,
    default: { unset: row.unset },
    help,
    read: (env) => parse(env[name] || undefined, name),
  };
}

export const MASTER_KEY_VARIABLE = 'AGENT_GATEWAY_MASTER_KEY';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Every setting, keyed by its field in the loaded configuration, in the order `--help` and the
 * README list them.
 */
export const SETTINGS = {
  host: setting({
    name: 'AGENT_GATEWAY_HOST',
    default: '127.0.0.1',
    parse: (text) => text,
    help: 'Address to listen on (`0.0.0.0` for all interfaces).',
  }),
  port: setting({
    name: 'AGENT_GATEWAY_PORT',
    default: '8080',
    parse: integer(0, 65_535),
    help: 'Port to listen on (`0` picks a free one).',
  }),
  /** PGlite data directory, and where the admin key file is written. */
  dataDir: setting({
    name: 'AGENT_GATEWAY_DATA_DIR',
    default: './data',
    parse: (text) => resolve(text),
    help: 'Embedded database and the admin key file.',
  }),
  /** Absent: the embedded PGlite database in dataDir. */
  databaseUrl: unsetByDefault({
    name: 'DATABASE_URL',
    unset: 'unset',
    parse: postgresUrl,
    help: 'PostgreSQL connection string; unset uses the embedded database.',
  }),
  databaseSchema: setting({
    name: 'AGENT_GATEWAY_DB_SCHEMA',
    default: 'public',
    parse: sqlIdentifier,
    help: 'PostgreSQL schema holding the tables.',
  }),
  logLevel: setting({
    name: 'AGENT_GATEWAY_LOG_LEVEL',
    default: 'info',
    parse: logLevel,
    help: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.',
  }),
  shutdownTimeoutMs: setting({
    name: 'AGENT_GATEWAY_SHUTDOWN_TIMEOUT_MS',
    default: '10000',
    parse: integer(100, 600_000),
    help: 'Longest graceful shutdown before the process exits anyway.',
  }),
  accessLog: setting({
    name: 'AGENT_GATEWAY_ACCESS_LOG',
    default: 'false',
    parse: boolean,
    help: '`true`: also log every HTTP request. Inspect decisions are logged either way (one line each; allows at `debug`).',
  }),
  toolsListWaitMs: setting({
    name: 'AGENT_GATEWAY_TOOLS_LIST_WAIT_MS',
    default: '2000',
    parse: integer(0, 60_000),
    help: 'How long registering or changing an MCP server waits for its `tools/list` (a slower server is learnt in the background).',
  }),
  toolsRefreshIntervalMs: setting({
    name: 'AGENT_GATEWAY_TOOLS_REFRESH_INTERVAL_MS',
    default: '300000',
    parse: integer(1_000, 86_400_000),
    help: "Period of the refresh of every MCP server's tool definitions (annotations such as `destructiveHint`).",
  }),
  /**
   * Absent: the URL the process listens on (`start` only: the split commands refuse to start
   * without it, cli/commands/split-deployment.ts requirePublicUrl).
   */
  publicUrl: unsetByDefault({
    name: 'AGENT_GATEWAY_PUBLIC_URL',
    unset: 'the listening URL',
    parse: httpBaseUrl,
    help: "Public base URL of the gateway: the OAuth issuer, the base of status-list URLs written into credentials and the `htu` agent proofs must name. Required behind a proxy; `control-plane` and `data-plane` refuse to start without it (`PUBLIC_URL_REQUIRED`), and a data plane whose value differs from the control plane's stops ([docs/deployment.md](docs/deployment.md)). Printed in every process's `listening` line.",
  }),
  /**
   * 32 bytes sealing the tenant CA keys; absent: the key file in dataDir (runtime/master-key.ts).
   * Processes that sign (start, control-plane) open it; data planes derive the MCP requestState
   * key from it.
   */
  masterKey: unsetByDefault({
    name: MASTER_KEY_VARIABLE,
    unset: '`<data dir>/master-key`',
    parse: (text, name) => (text === undefined ? undefined : parseMasterKey(text, name)),
    help: 'Master key sealing the tenant CA keys (AES-256-GCM): 32 bytes as 64 hex digits or 43 base64url characters (`openssl rand -hex 32`). Unset: `start` and `control-plane` use the key file in the data directory, made mode 0600 on first start. Every process that signs (the control plane) needs the same key; a process whose key cannot open the sealed keys refuses to start (`MASTER_KEY_MISMATCH`). Losing it makes the sealed CA keys unusable (the recovery: [docs/agentiam.md](docs/agentiam.md), key custody). Data planes need the same key too: they derive from it the MAC key of the MCP `requestState` the retry of a held call carries to any data plane ([docs/mcp-proxy.md](docs/mcp-proxy.md#held-calls-on-the-stateless-wire)); a data plane without it refuses such a retry.',
  }),
  killAckWaitMs: setting({
    name: 'AGENT_GATEWAY_KILL_ACK_WAIT_MS',
    default: '250',
    parse: integer(0, 60_000),
    help: "How long a kill waits for the data planes' acknowledgements before it answers; the answer's `propagation` names who confirmed ([docs/kill-switch.md](docs/kill-switch.md)).",
  }),
  mcpSessionConcurrency: setting({
    name: 'AGENT_GATEWAY_MCP_SESSION_CONCURRENCY',
    default: '32',
    parse: integer(1, 10_000),
    help: 'MCP proxy: calls in flight per session; more are refused `429 MCP_CONCURRENCY_LIMIT` ([docs/mcp-proxy.md](docs/mcp-proxy.md)).',
  }),
  mcpAgentConcurrency: setting({
    name: 'AGENT_GATEWAY_MCP_AGENT_CONCURRENCY',
    default: '128',
    parse: integer(1, 100_000),
    help: 'MCP proxy: calls in flight per agent, across its sessions on one data plane.',
  }),
  mcpMaxMessageBytes: setting({
    name: 'AGENT_GATEWAY_MCP_MAX_MESSAGE_BYTES',
    default: '4194304',
    parse: integer(1024, 64 * 1024 * 1024),
    help: 'MCP proxy: largest request body (`413` beyond) and largest message accepted from an upstream.',
  }),
  mcpListTtlMs: setting({
    name: 'AGENT_GATEWAY_MCP_LIST_TTL_MS',
    default: '60000',
    parse: integer(0, 86_400_000),
    help: "MCP proxy, 2026-07-28 clients: the `ttlMs` of a `tools/list` answer filtered for the calling agent (its `cacheScope` is `private`); a policy change that alters the agent's tools is announced on `subscriptions/listen` streams at once ([docs/mcp-proxy.md](docs/mcp-proxy.md)).",
  }),
  streamHeartbeatMs: setting({
    name: 'AGENT_GATEWAY_STREAM_HEARTBEAT_MS',
    default: '15000',
    parse: integer(10, 600_000),
    help: 'Heartbeat of the configuration stream; a data plane treats three missed ones as a lost stream and then reads the kill table before serving. The same on every process.',
  }),
  startupSnapshotWaitMs: setting({
    name: 'AGENT_GATEWAY_STARTUP_SNAPSHOT_WAIT_MS',
    default: '5000',
    parse: integer(0, 600_000),
    help: "Data plane: how long it waits at start for the control plane's current configuration, refusing requests 503 `DATA_PLANE_NOT_READY`, before it serves its persisted snapshot ([docs/config-push.md](docs/config-push.md#start-up)).",
  }),
  egressAllow: unsetByDefault({
    name: EGRESS_ALLOW_VARIABLE,
    unset: 'unset',
    parse: egressList,
    help: 'Comma-separated CIDRs, addresses and host names (`*.example.com`) upstream MCP servers may be reached at besides the defaults; an exact address (e.g. `169.254.169.254`) releases a never-contacted one. See [Egress](docs/security.md#egress).',
  }),
  egressDeny: unsetByDefault({
    name: EGRESS_DENY_VARIABLE,
    unset: 'unset',
    parse: egressList,
    help: 'Comma-separated CIDRs, addresses and host names upstreams are never reached at; wins over everything. A multi-tenant gateway closes the private ranges here (`10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,127.0.0.0/8,::1,fc00::/7,100.64.0.0/10`).',
  }),
  cimdAllowPrivate: setting({
    name: 'AGENT_GATEWAY_CIMD_ALLOW_PRIVATE',
    default: 'false',
    parse: boolean,
    help: '`true`: client ID metadata documents may be fetched from private addresses too (loopback, RFC 1918, ULA, CGNAT); the egress policy still applies. Off by default: the fetch is triggered by unauthenticated callers of /oauth/authorize ([docs/oauth.md](docs/oauth.md#client-id-metadata-documents)).',
  }),
  auditCheckpointEntries: setting({
    name: 'AGENT_GATEWAY_AUDIT_CHECKPOINT_ENTRIES',
    default: '1000',
    parse: integer(1, 10_000_000),
    help: "A tenant's signed audit checkpoint is cut once this many entries were appended since its last one (or after AGENT_GATEWAY_AUDIT_CHECKPOINT_SECONDS, whichever comes first). Cut by the process holding the master key (`start`, the control plane) off the append path ([docs/audit.md](docs/audit.md#checkpoints)).",
  }),
  auditCheckpointSeconds: setting({
    name: 'AGENT_GATEWAY_AUDIT_CHECKPOINT_SECONDS',
    default: '60',
    parse: integer(1, 86_400),
    help: "A tenant's signed audit checkpoint is cut once this many seconds passed since its last one with at least one new entry. The smaller it is, the sooner an auditor can hold a checkpoint that covers an entry.",
  }),
  auditSinkFile: unsetByDefault({
    name: 'AGENT_GATEWAY_AUDIT_SINK_FILE',
    unset: 'unset',
    parse: (text) => (text === undefined || text.trim() === '' ? undefined : text.trim()),
    help: 'An append-only file that receives every signed audit checkpoint, in order, one signed note after another (a blank line between two); put it on another volume than the database. A sink that fails (its directory is missing, the volume is full) retries with backoff and delays only its own anchoring, never an append; it resumes where it stopped, also after a restart ([docs/audit.md](docs/audit.md#sinks)).',
  }),
  auditSinkUrl: unsetByDefault({
    name: 'AGENT_GATEWAY_AUDIT_SINK_URL',
    unset: 'unset',
    parse: httpUrl,
    help: "An HTTP endpoint that receives every signed audit checkpoint, in order: a POST of the signed note itself (`text/plain`), retried with backoff until it answers 2xx. The connection passes the egress policy (AGENT_GATEWAY_EGRESS_ALLOW / _DENY) like an upstream's ([docs/audit.md](docs/audit.md#sinks)).",
  }),
  auditSinkToken: unsetByDefault({
    name: 'AGENT_GATEWAY_AUDIT_SINK_TOKEN',
    unset: 'unset',
    parse: (text) => (text === undefined || text.trim() === '' ? undefined : text.trim()),
    help: 'The bearer token sent to AGENT_GATEWAY_AUDIT_SINK_URL (`Authorization: Bearer …`); unset: no Authorization header.',
  }),
  auditWitnessUrl: unsetByDefault({
    name: 'AGENT_GATEWAY_AUDIT_WITNESS_URL',
    unset: 'unset',
    parse: httpUrl,
    help: "A C2SP tlog-witness's submission prefix: every signed audit checkpoint is submitted with `add-checkpoint` (and the consistency proof from the size the witness has), and the witness's cosignature is stored with the checkpoint and served after the gateway's signature. Needs AGENT_GATEWAY_AUDIT_WITNESS_KEY. The witness must trust the gateway's audit verifier key (GET /api/v1/audit/checkpoint/key) for the tenants' origins ([docs/audit.md](docs/audit.md#sinks)).",
  }),
  auditWitnessKey: unsetByDefault({
    name: 'AGENT_GATEWAY_AUDIT_WITNESS_KEY',
    unset: 'unset',
    parse: (text, name) => {
      if (text === undefined || text.trim() === '') return undefined;
      const key = parseWitnessKey(text);
      if (typeof key === 'string')
        throw gatewayError('CONFIG_INVALID', { setting: name, problem: key });
      return key;
    },
    help: "The witness's verifier key (`<name>+<key id>+<base64 0x04 ‖ Ed25519 key>`): only its valid cosignature/v1 is stored.",
  }),
  graphqlIntrospection: setting({
    name: 'AGENT_GATEWAY_GRAPHQL_INTROSPECTION',
    default: 'true',
    parse: onUnlessSwitchedOff,
    help: 'GraphQL introspection for authenticated API keys (GraphiQL, client generators); `false`, `0`, `off` or `no` switches it off for every key, over HTTP and WebSocket. A request without a valid key never reaches GraphQL.',
  }),
  requireMcpOAuth: setting({
    name: 'NEXUS_REQUIRE_MCP_OAUTH',
    default: 'false',
    parse: boolean,
    help: '`true`: every production forward must carry a gateway-minted access token bound to its server.',
  }),
} as const;

type SettingValues = {
  readonly [K in keyof typeof SETTINGS]: ReturnType<(typeof SETTINGS)[K]['read']>;
};

/** The loaded configuration: a field per setting, the two egress lists as one policy. */
export type GatewayConfig = Omit<SettingValues, 'egressAllow' | 'egressDeny'> & {
  readonly egress: EgressPolicy;
};

/** Reads every setting in table order; the first invalid one throws. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const values = Object.fromEntries(
    Object.entries(SETTINGS).map(([key, row]) => [key, row.read(env)]),
  ) as unknown as SettingValues;
  const { egressAllow, egressDeny, ...rest } = values;
  return { ...rest, egress: { allow: egressAllow, deny: egressDeny } };
}

function integer(min: number, max: number): (text: string, name: string) => number {
  return (text, name) => {
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min || value > max) {
      throw invalid(name, text, `a whole number from ${min} to ${max}`);
    }
    return value;
  };
}

function boolean(text: string, name: string): boolean {
  if (text === 'false' || text === '0') return false;
  if (text === 'true' || text === '1') return true;
  throw invalid(name, text, 'true or false');
}

/**
 * Lenient, unlike `boolean`, as this switch has always been: any other value (any case,
 * surrounding spaces ignored) leaves it on.
 */
function onUnlessSwitchedOff(text: string): boolean {
  const value = text.trim().toLowerCase();
  return !(value === 'false' || value === '0' || value === 'off' || value === 'no');
}

function logLevel(text: string, name: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(text)) {
    throw invalid(name, text, `one of ${LOG_LEVELS.join(', ')}`);
  }
  return text as LogLevel;
}

function sqlIdentifier(text: string, name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(text)) {
    throw invalid(name, text, 'a lower-case SQL identifier');
  }
  return text;
}

/** The value is never echoed: a connection string may carry a password. */
function postgresUrl(text: string | undefined, name: string): string | undefined {
  if (text !== undefined && !/^postgres(ql)?:\/\//.test(text)) {
    throw invalid(name, '(hidden)', 'a postgresql:// connection string');
  }
  return text;
}

function httpBaseUrl(text: string | undefined, name: string): string | undefined {
  if (text !== undefined && !isHttpBaseUrl(text)) {
    throw invalid(name, text, 'an http(s) URL without query or fragment');
  }
  return text;
}

/** An http(s) URL (a query allowed); blank is unset. */
function httpUrl(text: string | undefined, name: string): string | undefined {
  const value = text?.trim();
  if (value === undefined || value === '') return undefined;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw invalid(name, value, 'an http(s) URL');
  }
  return value;
}

function isHttpBaseUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash;
}

/** An egress list; the first invalid entry fails the start, named with the variable. */
function egressList(text: string | undefined, name: string): EgressList {
  const { list, problems } = parseEgressList(text);
  const problem = problems[0];
  if (problem !== undefined) {
    throw gatewayError('CONFIG_INVALID', {
      setting: `${name} entry ${JSON.stringify(problem.entry)}`,
      problem: problem.problem,
    });
  }
  return list;
}

function invalid(name: string, value: string, expected: string): GatewayError {
  return gatewayError('CONFIG_INVALID', {
    setting: `${name}=${value}`,
    problem: `expected ${expected}`,
  });
}
