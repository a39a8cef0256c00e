// Builds the whole data plane from injected dependencies: the shared HTTP edge
// (http-edge/server.ts) and every data-plane route — inspect, the MCP proxy, the approval
// long-poll, public compliance validation, AgentIAM (DID resolution, contexts, status lists,
// delegation verify), the OAuth authorization server, the kill switch. The composition (runtime/)
// creates the dependencies and decides where to listen; nothing here opens a database or a port.
import type { FastifyInstance } from 'fastify';
import { buildServer, type ServerOptions } from '../http-edge/server.js';
import type { EventBus } from '../shared/events/index.js';
import type { PublicUrl } from '../shared/public-url.js';
import type { Database } from '../storage/engine/database.js';
import type { AuditWriter } from '../storage/tables/audit-writer.js';
import { IdentityVerifier, type IdentityVerifierOptions } from './agentiam/identity-verifier.js';
import type { ExecutionRegistry } from './executions.js';
import type { AccessTokenMinter } from './governance/dependencies.js';
import type { KillSwitch } from './kill/kill-switch.js';
import { UsageLimiter } from './limits/usage-limiter.js';
import type { ListedToolsRecorder } from './listed-tools.js';
import { PROXY_LIMIT_DEFAULTS, type ProxyLimits } from './mcp-proxy/dependencies.js';
import { RequestStateKey } from './mcp-proxy/request-state-key.js';
import { mcpProxyRoutes } from './mcp-proxy/route.js';
import { ProxySessions } from './mcp-proxy/sessions.js';
import { MCP_PROXY_PATH } from './mcp-proxy/transport/streamable-http.js';
import { UpstreamSessions } from './mcp-proxy/upstream/index.js';
import type { GatewayMetrics } from './metrics/gateway-metrics.js';
import { oauthIndexOf } from './oauth/oauth-index.js';
import { RevokedTokens } from './oauth/revocations.js';
import { authPlugin, type KeyUseListener } from './plugins/auth.js';
import { agentIamRoutes } from './routes/agentiam/index.js';
import { approvalRoutes } from './routes/approvals/index.js';
import { type CompliancePluginOptions, compliancePlugin } from './routes/compliance/index.js';
import { INSPECT_PATH, inspectRoutes } from './routes/inspect/index.js';
import { killRoutes } from './routes/kill/index.js';
import { type OAuthRoutesDependencies, oauthRoutes } from './routes/oauth/index.js';
import type { SnapshotStore } from './store/snapshot-store.js';
import type { UpstreamClient } from './upstream/index.js';

export interface DataPlaneDependencies extends ServerOptions {
  readonly metrics: GatewayMetrics;
  readonly store: SnapshotStore;
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly upstream: UpstreamClient;
  readonly executions: ExecutionRegistry;
  /** Approval events: published for held calls, awaited by the approval long-poll. */
  readonly events: Pick<EventBus, 'publish' | 'subscribe'>;
  /** NEXUS_REQUIRE_MCP_OAUTH: every production forward must carry a gateway-minted token. */
  readonly requireMcpOAuth: boolean;
  readonly mintAccessToken?: AccessTokenMinter | undefined;
  /** Notes key uses for `lastUsedAt`. */
  readonly onKeyUse?: KeyUseListener | undefined;
  /** Learns tool definitions from forwarded tools/list answers. */
  readonly listedTools?: Pick<ListedToolsRecorder, 'record'> | undefined;
  /** Longest `wait` of the approval long-poll, in seconds (default 30). */
  readonly maxApprovalWaitSeconds?: number | undefined;
  /** Public compliance batch validation: rate limit and size limits (production defaults). */
  readonly compliance?: CompliancePluginOptions | undefined;
  /** The gateway's public base URL (status-list URLs, the htu of agent proofs). */
  readonly publicUrl: PublicUrl;
  /** AgentIAM verification: proof cache size, jti store capacity (production defaults). */
  readonly agentIam?: Omit<IdentityVerifierOptions, 'metrics'> | undefined;
  /** The kill switch's receiver (POST /api/v2/infrastructure/agents/{key}/kill). */
  readonly killSwitch: Pick<KillSwitch, 'kill'>;
  /** The OAuth authorization server's own parts (signer, recorder, limits). */
  readonly oauth?:
    | Omit<OAuthRoutesDependencies, 'store' | 'publicUrl' | 'db' | 'audit' | 'metrics'>
    | undefined;
  /** The MCP proxy's sessions (shared with the kill applier, which closes a killed agent's). */
  readonly mcpSessions?: ProxySessions | undefined;
  /** The MCP proxy's upstream sessions (closed by the runtime at stop). */
  readonly mcpUpstreamSessions?: UpstreamSessions | undefined;
  readonly mcpLimits?: Partial<ProxyLimits> | undefined;
  /** The MAC key of the proxy's requestState envelopes (absent: none minted, none accepted). */
  readonly requestStateKey?: RequestStateKey | undefined;
  /** Counts calls against usage limits; absent: one of its own, closed (flushed) with the app. */
  readonly usage?: UsageLimiter | undefined;
}

export async function buildDataPlaneApp(deps: DataPlaneDependencies): Promise<FastifyInstance> {
  const app = await buildServer(deps);
  // Before the routes: they authenticate API keys with its decorators (`app.requireScope(scope)`).
  await app.register(authPlugin, { store: deps.store, onKeyUse: deps.onKeyUse });
  const identity = new IdentityVerifier({ ...deps.agentIam, metrics: deps.metrics });
  const usage = deps.usage ?? new UsageLimiter({ db: deps.db });
  // After the routes' own close hooks: calls in flight are counted before the last flush.
  if (!deps.usage) app.addHook('onClose', () => usage.close());
  await app.register(compliancePlugin, deps.compliance ?? {});
  await app.register(inspectRoutes, {
    ...deps,
    usage,
    identity,
    surfaceRoute: `POST ${INSPECT_PATH}`,
  });
  const revoked = deps.oauth?.revoked ?? new RevokedTokens();
  const upstreamSessions = deps.mcpUpstreamSessions ?? new UpstreamSessions();
  if (!deps.mcpUpstreamSessions) app.addHook('onClose', () => upstreamSessions.close());
  await app.register(mcpProxyRoutes, {
    ...deps,
    usage,
    identity,
    surfaceRoute: `POST ${MCP_PROXY_PATH}`,
    sessions:
      deps.mcpSessions ?? new ProxySessions({}, (open) => deps.metrics.mcpProxySessions.set(open)),
    upstreamSessions,
    approvalEvents: deps.events,
    requestStateKey: deps.requestStateKey ?? new RequestStateKey(),
    limits: { ...PROXY_LIMIT_DEFAULTS, ...deps.mcpLimits },
    auth: {
      issuer: () => deps.publicUrl.get(),
      index: () => oauthIndexOf(deps.store.current, deps.oauth?.signer),
      revoked,
    },
  });
  await app.register(agentIamRoutes, { store: deps.store, identity });
  await app.register(oauthRoutes, {
    ...deps.oauth,
    revoked,
    identity,
    store: deps.store,
    publicUrl: deps.publicUrl,
    db: deps.db,
    audit: deps.audit,
    metrics: deps.metrics,
    events: deps.events,
  });
  await app.register(approvalRoutes, {
    store: deps.store,
    db: deps.db,
    events: deps.events,
    metrics: deps.metrics,
    executions: deps.executions,
    maxWaitSeconds: deps.maxApprovalWaitSeconds,
  });
  await app.register(killRoutes, { killSwitch: deps.killSwitch });
  return app;
}
