// A real single-process gateway for end-to-end tests: a migrated database (PGlite or a
// PostgreSQL schema of the test's own), a tenant with an API key and an agent, the whole data
// plane listening on 127.0.0.1 on a free port. Configuration changes go through the
// control-plane services and are published to the data plane before the helper returns.

import { randomBytes } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { createAgent } from '../../control-plane/services/agents.js';
import {
  type GatewayPolicyPatch,
  updateGatewayPolicy,
} from '../../control-plane/services/gateway-policy.js';
import {
  type RegisterMcpServerInput,
  registerMcpServer,
} from '../../control-plane/services/mcp-servers.js';
import { publishPolicyVersion } from '../../control-plane/services/npl-policies.js';
import { createApiKey, createTenant } from '../../control-plane/services/tenants.js';
import type { SessionLimits } from '../../data-plane/mcp-proxy/sessions.js';
import type { AuthFailureLimits } from '../../data-plane/oauth/auth-failure-limiter.js';
import type { UpstreamClientOptions } from '../../data-plane/upstream/index.js';
import { createReadiness } from '../../http-edge/health.js';
import {
  buildGatewayRuntime,
  type GatewayRuntime,
  type GatewayRuntimeOptions,
} from '../../runtime/gateway-runtime.js';
import { generateTokenSigningKey, loadTokenSigningKey } from '../../runtime/token-signing-key.js';
import { type AgentId, asAgentId, type TenantId } from '../../shared/ids.js';
import { parseWitnessKey, type WitnessKey } from '../../shared/tlog/index.js';
import type { Database } from '../../storage/engine/database.js';
import { createTestDatabase, type DatabaseKindUnderTest, type TestDatabase } from './databases.js';

/**
 * Event-bus subscriptions a runtime serving the control plane holds from build on: its kill
 * fan-out's and the GraphQL key watch's (revocations close subscriptions). Tests that wait for
 * a subscriber of their own wait for more than these.
 */
export const RUNTIME_BUS_SUBSCRIPTIONS = 2;

export interface TestTenant {
  readonly id: TenantId;
  readonly name: string;
  /** An API key with agents:execute. */
  readonly key: string;
  readonly agentId: AgentId;
}

export interface TestGateway {
  readonly url: string;
  readonly db: Database;
  readonly runtime: GatewayRuntime;
  readonly tenant: TestTenant;
  /** A second tenant, for isolation tests. */
  addTenant(name?: string): Promise<TestTenant>;
  addAgent(
    tenantId: string,
    input?: { name?: string; role?: string; allowedTools?: string[] },
  ): Promise<AgentId>;
  addApiKey(tenantId: string, scopes: string[]): Promise<string>;
  setPolicy(tenantId: string, patch: GatewayPolicyPatch): Promise<void>;
  registerServer(input: RegisterMcpServerInput): Promise<void>;
  publishPolicy(tenantId: string, source: string | object): Promise<string>;
  /** Waits until the data plane serves every change committed so far. */
  sync(): Promise<void>;
  inspect(
    body: unknown,
    init?: { key?: string; headers?: Record<string, string> },
  ): Promise<{
    status: number;
    body: Record<string, unknown>;
  }>;
  close(): Promise<void>;
}

export async function startTestGateway(
  kind: DatabaseKindUnderTest,
  options: {
    upstream?: UpstreamClientOptions;
    requireMcpOAuth?: boolean;
    /** Default: silent. */
    logger?: Logger;
    /** How long registering a server through GraphQL waits for its tools/list (default 2000). */
    toolsListWaitMs?: number;
    /** Failed OAuth client authentications allowed (default: production limits). */
    oauthAuthFailureLimits?: AuthFailureLimits;
    /** MCP proxy concurrency limits (default: production limits). */
    mcpSessionLimits?: Partial<SessionLimits>;
    /** MCP proxy limits (default: production limits). */
    mcpLimits?: GatewayRuntimeOptions['mcpLimits'];
    /**
     * Keep the token signing key in this data directory and follow its rotation, as a process
     * does (default: a fresh key in memory).
     */
    tokenSigningKeyDir?: string;
    /** The egress policy and resolver (default: the built-in policy, node's resolver). */
    egress?: GatewayRuntimeOptions['egress'];

    /** Refusal auditing's clock (tests move it past a window) and bounds. */
    refusalAudit?: GatewayRuntimeOptions['refusalAudit'];
    /** GraphQL introspection for authenticated keys (default on). */
    graphqlIntrospection?: boolean;
    /**
     * The master key the MCP proxy derives its requestState key from (default: a random one;
     * null: none, as a data plane without AGENT_GATEWAY_MASTER_KEY).
     */
    requestStateMasterKey?: Buffer | null;
    /** Client ID metadata documents: private addresses, extra CA, fetch time limit. */
    cimd?: { allowPrivate?: boolean; ca?: string; timeoutMs?: number };
    /**
     * Cut signed audit checkpoints as `start` does: the key custody gets a master key and the
     * checkpointer starts (default: off, so other tests pay nothing for it).
     */
    auditCheckpoints?: {
      entries?: number;
      seconds?: number;
      masterKey?: Buffer;
      sinkFile?: string;
      sinkUrl?: string;
      sinkToken?: string;
      witness?: { url: string; key: string };
    };
  } = {},
): Promise<TestGateway> {
  const t: TestDatabase = await createTestDatabase(kind);
  const db = t.db;
  const readiness = createReadiness();
  const runtime = await buildGatewayRuntime({
    db,
    logger: options.logger ?? pino({ level: 'silent' }),
    readiness,
    snapshotPollIntervalMs: 60_000,
    defaultMetrics: false,
    ...(options.upstream ? { upstream: options.upstream } : {}),
    ...(options.requireMcpOAuth ? { requireMcpOAuth: true } : {}),
    ...(options.toolsListWaitMs === undefined ? {} : { toolsListWaitMs: options.toolsListWaitMs }),
    ...(options.tokenSigningKeyDir === undefined
      ? { tokenSigningKey: await generateTokenSigningKey() }
      : {
          tokenSigningKey: await loadTokenSigningKey(options.tokenSigningKeyDir),
          reloadTokenSigningKey: () => loadTokenSigningKey(options.tokenSigningKeyDir as string),
        }),
    ...(options.oauthAuthFailureLimits
      ? { oauthAuthFailureLimits: options.oauthAuthFailureLimits }
      : {}),
    ...(options.mcpSessionLimits ? { mcpSessionLimits: options.mcpSessionLimits } : {}),
    ...(options.mcpLimits ? { mcpLimits: options.mcpLimits } : {}),
    ...(options.egress ? { egress: options.egress } : {}),

    ...(options.refusalAudit ? { refusalAudit: options.refusalAudit } : {}),
    ...(options.cimd?.allowPrivate === undefined
      ? {}
      : { cimdAllowPrivate: options.cimd.allowPrivate }),
    ...(options.cimd?.ca === undefined ? {} : { cimdCa: options.cimd.ca }),
    ...(options.cimd?.timeoutMs === undefined ? {} : { cimdTimeoutMs: options.cimd.timeoutMs }),
    ...(options.graphqlIntrospection === undefined
      ? {}
      : { graphqlIntrospection: options.graphqlIntrospection }),
    ...(options.auditCheckpoints ? { auditCheckpoint: options.auditCheckpoints } : {}),
    ...(options.auditCheckpoints
      ? {
          auditSinks: {
            file: options.auditCheckpoints.sinkFile,
            url: options.auditCheckpoints.sinkUrl,
            token: options.auditCheckpoints.sinkToken,
            witness: options.auditCheckpoints.witness
              ? {
                  url: options.auditCheckpoints.witness.url,
                  key: parseWitnessKey(options.auditCheckpoints.witness.key) as WitnessKey,
                }
              : undefined,
            // Failing sinks retry at once: tests wait for the outcome, not for a backoff.
            retryMinMs: 20,
          },
        }
      : {}),
  });
  await runtime.registerTokenSigningKey();
  await runtime.publisher.start();
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  readiness.ready = true;
  const address = runtime.app.server.address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  runtime.publicUrl.learn(url);
  if (options.requestStateMasterKey !== null) {
    runtime.requestStateKey.useMasterKey(options.requestStateMasterKey ?? randomBytes(32));
  }

  const sync = () => runtime.publisher.publishNow();
  const addAgent = async (
    tenantId: string,
    input: { name?: string; role?: string; allowedTools?: string[] } = {},
  ) => {
    const { id } = await createAgent(db, {
      tenantId,
      name: input.name ?? `agent-${randomBytes(3).toString('hex')}`,
      role: input.role ?? 'agent',
      allowedTools: input.allowedTools ?? ['*'],
      publicKey: `test-key-${randomBytes(16).toString('hex')}`,
    });
    await sync();
    return asAgentId(id);
  };
  const addApiKey = async (tenantId: string, scopes: string[]) => {
    const { key } = await createApiKey(db, { tenantId, name: 'test', scopes });
    await sync();
    return key;
  };
  const addTenant = async (name = `t-${randomBytes(4).toString('hex')}`): Promise<TestTenant> => {
    const tenant = await createTenant(db, { name });
    const key = await addApiKey(tenant.id, ['agents:execute']);
    const agentId = await addAgent(tenant.id);
    return { id: tenant.id, name: tenant.name, key, agentId };
  };
  const tenant = await addTenant();
  if (options.auditCheckpoints) {
    const masterKey = options.auditCheckpoints.masterKey ?? randomBytes(32);
    runtime.keyCustody.useMasterKey(masterKey, 'the test gateway');
    await runtime.auditCheckpoints?.start();
    runtime.auditSinks?.start();
  }
  return {
    url,
    db,
    runtime,
    tenant,
    addTenant,
    addAgent,
    addApiKey,
    async setPolicy(tenantId, patch) {
      await updateGatewayPolicy(db, tenantId, patch, 'test');
      await sync();
    },
    async registerServer(input) {
      await registerMcpServer(db, input);
      await sync();
    },
    async publishPolicy(tenantId, source) {
      const { uri } = await publishPolicyVersion(db, { tenantId, source });
      await sync();
      return uri;
    },
    sync,
    async inspect(body, init = {}) {
      const response = await postAsClient(`${url}/api/v1/mcp/gateway/inspect`, body, {
        key: init.key ?? tenant.key,
        headers: init.headers,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async close() {
      await runtime.app.close();
      await runtime.stop();
      await t.dispose();
    },
  };
}

/**
 * POSTs a raw (string) or JSON body as an API client would: `key` as the bearer token (null: no
 * Authorization), content-type application/json unless given, then any other headers.
 */
export function postAsClient(
  url: string,
  body: unknown,
  init: { key: string | null; contentType?: string; headers?: Record<string, string> },
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': init.contentType ?? 'application/json',
      ...(init.key === null ? {} : { authorization: `Bearer ${init.key}` }),
      ...init.headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A well-formed inspect body for a tools/call; override any part. */
export function inspectBody(
  agentId: string,
  overrides: {
    server?: string;
    tool?: string;
    args?: Record<string, unknown>;
    mode?: string;
    policy?: string;
    approvalId?: string;
    id?: string | number;
  } = {},
): Record<string, unknown> {
  const tool = overrides.tool ?? 'echo';
  const body: Record<string, unknown> = {
    agent_id: agentId,
    execution_id: 'exec-1',
    server_id: overrides.server ?? 'files',
    tool_name: tool,
    execution_mode: overrides.mode ?? 'simulation',
    request: {
      jsonrpc: '2.0',
      id: overrides.id ?? 1,
      method: 'tools/call',
      params: { name: tool, arguments: overrides.args ?? { text: 'hello' } },
    },
  };
  if (overrides.policy !== undefined) body.policy = overrides.policy;
  if (overrides.approvalId !== undefined) body.approval_id = overrides.approvalId;
  return body;
}
