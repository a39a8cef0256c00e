// What the proxy works with: the governance dependencies inspect uses (one pipeline, the same
// audit, approvals, executions and metrics), plus its own sessions, upstream sessions and limits.
import type { EventBus } from '../../shared/events/index.js';
import type { InspectDependencies } from '../governance/dependencies.js';
import type { ProxyAuthDependencies } from './auth.js';
import type { RequestStateKey } from './request-state-key.js';
import type { ProxySessions } from './sessions.js';
import type { UpstreamSessions } from './upstream/index.js';

export interface ProxyLimits {
  /** Largest POST body (and so message), in bytes. Default 4 MiB. */
  readonly maxMessageBytes: number;
  readonly connectTimeoutMs: number;
  /** Upstream headers, then the longest silence between two messages of a stream. */
  readonly readTimeoutMs: number;
  /** SSE keep-alive comments while a call waits (a held call), in ms. */
  readonly keepAliveMs: number;
  /** The `ttlMs` of a filtered tools/list answer to a stateless-era client. Default 60 s. */
  readonly listTtlMs: number;
}

export const PROXY_LIMIT_DEFAULTS: ProxyLimits = {
  maxMessageBytes: 4 * 1024 * 1024,
  connectTimeoutMs: 2_000,
  readTimeoutMs: 30_000,
  keepAliveMs: 15_000,
  listTtlMs: 60_000,
};

export interface McpProxyDependencies extends InspectDependencies {
  readonly sessions: ProxySessions;
  readonly upstreamSessions: UpstreamSessions;
  /** Approval resolutions, awaited by held calls; `approval.waiting` published while they wait. */
  readonly approvalEvents: Pick<EventBus, 'subscribe' | 'publish'>;
  readonly auth: ProxyAuthDependencies;
  readonly limits: ProxyLimits;
  /** Authenticates the requestState the proxy hands 2026-07-28 clients (request-state-key.ts). */
  readonly requestStateKey: RequestStateKey;
}
