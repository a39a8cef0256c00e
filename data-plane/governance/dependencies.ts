// What the inspect route works with: one dependencies object, built once by data-plane/app.ts and
// passed to every step (deny, hold, allow, forward, shadow), so no step closes over plugin state.
import type { Logger } from 'pino';
import type { RefusalAuditor } from '../../http-edge/refusal-auditor.js';
import type { EventBus } from '../../shared/events/index.js';
import type { PublicUrl } from '../../shared/public-url.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import type { IdentityVerifier } from '../agentiam/identity-verifier.js';
import type { ExecutionRegistry } from '../executions.js';
import type { UsageLimiter } from '../limits/usage-limiter.js';
import type { ListedToolsRecorder } from '../listed-tools.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { CompiledAgent, CompiledServer, CompiledTenant } from '../store/compiled-snapshot.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import type { UpstreamClient } from '../upstream/index.js';

/** Mints the access token a forward carries under oauthMode mcp_as. */
export type AccessTokenMinter = (input: {
  tenant: CompiledTenant;
  agent: CompiledAgent;
  server: CompiledServer;
}) => Promise<string>;

export interface InspectDependencies {
  /** Where decision lines go (exchange.ts). */
  readonly logger: Pick<Logger, 'info' | 'debug' | 'error' | 'isLevelEnabled'>;
  readonly store: SnapshotStore;
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly upstream: UpstreamClient;
  /** Counts calls against the tenant's usage limits and budgets (docs/limits.md). */
  readonly usage: Pick<UsageLimiter, 'reserve' | 'view'>;
  readonly executions: ExecutionRegistry;
  readonly metrics: GatewayMetrics;
  /** Receives `approval.created` for each held call (the approvalQueue subscription). */
  readonly events: Pick<EventBus, 'publish'>;
  /**
   * Mints the access token a forward carries when the tenant's oauthMode is mcp_as (or
   * NEXUS_REQUIRE_MCP_OAUTH=true): data-plane/oauth/forwarding-tokens.ts, given by the runtime
   * of a process with a token signing key. Absent, or throwing: such forwards fail closed with
   * MCP_OAUTH_UNAVAILABLE.
   */
  readonly mintAccessToken?: AccessTokenMinter | undefined;
  /** NEXUS_REQUIRE_MCP_OAUTH: every production forward must carry a gateway-minted token. */
  readonly requireMcpOAuth: boolean;
  /** Learns tool definitions from forwarded tools/list answers. */
  readonly listedTools?: Pick<ListedToolsRecorder, 'record'> | undefined;
  /** Agent identity on a call: chain verification and the Agent-Proof jti store. */
  readonly identity: IdentityVerifier;
  /** The base of the `htu` an Agent-Proof must name. */
  readonly publicUrl: PublicUrl;
  /**
   * Audits a killed agent's refused calls, bounded (http-edge/refusal-auditor.ts). Absent: they
   * are audited as `inspect.deny`, each.
   */
  readonly refusals?: Pick<RefusalAuditor, 'refuse'> | undefined;
  /** The route this surface's refusals name in the trail (`POST /mcp/:serverId`, …). */
  readonly surfaceRoute?: string | undefined;
}
