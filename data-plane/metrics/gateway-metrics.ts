// Prometheus metrics of the data plane, served at /metrics in the text exposition format by the
// HTTP edge (http-edge/metrics.ts). One registry per app (tests build many apps in one process).
// Label values come from closed sets (decisions, registry codes, outcomes), never from request
// data, so cardinality stays bounded.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { DecisionTally } from './decision-tally.js';

export interface GatewayMetrics {
  readonly registry: Registry;
  readonly inspectDuration: Histogram<'decision' | 'reason_code' | 'mode'>;
  readonly approvalWait: Histogram<'source' | 'outcome'>;
  readonly upstreamDuration: Histogram<'outcome'>;
  readonly auditFlushDuration: Histogram;
  readonly auditFlushEntries: Counter;
  readonly snapshotVersion: Gauge;
  readonly snapshotApplied: Counter<'result'>;
  readonly toolRefreshes: Counter<'trigger' | 'outcome'>;
  readonly chainVerifications: Counter<'source' | 'result'>;
  readonly credentialProofChecks: Counter<'cache' | 'result'>;
  readonly oauthTokensIssued: Counter<'kind'>;
  readonly oauthClientAuthFailures: Counter<'outcome'>;
  readonly revocationsApplied: Counter<'kind'>;
  readonly mcpProxySessions: Gauge;
  readonly mcpProxyMessages: Counter<'kind' | 'era'>;
  readonly limitHits: Counter<'limit_id' | 'action'>;
  readonly auditCheckpoints: Counter<'trigger'>;
  readonly auditCheckpointFailures: Counter;
  readonly auditSinkDeliveries: Counter<'sink' | 'outcome'>;
  readonly auditSinkLastAnchored: Gauge<'sink'>;
  readonly auditSinkBacklog: Gauge<'sink'>;
  readonly auditSinkAnchoredTreeSize: Gauge<'sink' | 'tenant'>;
  /** Decisions per tenant and minute, drained into decision_counts (decisionStats). */
  readonly decisions: DecisionTally;
}

const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];
/** A human's pace: seconds to an hour (approvalWaitSeconds is at most 3600). */
const APPROVAL_WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];

export function createGatewayMetrics(options: { defaultMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    inspectDuration: new Histogram({
      name: 'agent_gateway_inspect_duration_seconds',
      help: "The gateway's time to decide a call and answer it (a forward included), by decision, reason code and mode; never the time a call waited for a human (agent_gateway_approval_wait_seconds).",
      labelNames: ['decision', 'reason_code', 'mode'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    approvalWait: new Histogram({
      name: 'agent_gateway_approval_wait_seconds',
      help: "Time a client waited for an approval's decision, by source (mcp_proxy: a held tools/call; long_poll: GET /api/v1/mcp/gateway/approvals/{id}?wait) and outcome (approved, rejected, expired; timed_out: the wait ended first; abandoned: the client left, the gateway stopped or the agent was killed).",
      labelNames: ['source', 'outcome'],
      buckets: APPROVAL_WAIT_BUCKETS,
      registers: [registry],
    }),
    upstreamDuration: new Histogram({
      name: 'agent_gateway_upstream_duration_seconds',
      help: 'Time of forwards to upstream MCP servers, by outcome.',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    auditFlushDuration: new Histogram({
      name: 'agent_gateway_audit_flush_duration_seconds',
      help: 'Time of one group commit of the audit trail.',
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    auditFlushEntries: new Counter({
      name: 'agent_gateway_audit_entries_total',
      help: 'Audit entries committed.',
      registers: [registry],
    }),
    snapshotVersion: new Gauge({
      name: 'agent_gateway_snapshot_version',
      help: 'Version of the configuration snapshot in use.',
      registers: [registry],
    }),
    snapshotApplied: new Counter({
      name: 'agent_gateway_snapshot_applies_total',
      help: 'Configuration snapshots received, by result (applied, rejected), plus one tenant_rejected per tenant held at its last good state.',
      labelNames: ['result'],
      registers: [registry],
    }),
    toolRefreshes: new Counter({
      name: 'agent_gateway_tool_refreshes_total',
      help: "Learning of MCP servers' tool definitions from tools/list, by trigger (change, periodic, passthrough) and outcome (changed, unchanged, failed).",
      labelNames: ['trigger', 'outcome'],
      registers: [registry],
    }),
    chainVerifications: new Counter({
      name: 'agent_gateway_agentiam_chain_verifications_total',
      help: 'AgentIAM identity and delegation-chain verifications, by source (verify: the delegation verify route; inspect: identity on a call) and result (valid, invalid).',
      labelNames: ['source', 'result'],
      registers: [registry],
    }),
    credentialProofChecks: new Counter({
      name: 'agent_gateway_agentiam_proof_checks_total',
      help: 'Credential proof (Ed25519Signature2020) checks, by cache (hit: answered from the verification cache; miss: canonicalized and verified) and result (verified, failed).',
      labelNames: ['cache', 'result'],
      registers: [registry],
    }),
    oauthTokensIssued: new Counter({
      name: 'agent_gateway_oauth_tokens_issued_total',
      help: 'Access tokens signed, by kind (client_credentials and authorization_code: the token endpoint; forward: minted for a forward under oauthMode mcp_as, cache misses only).',
      labelNames: ['kind'],
      registers: [registry],
    }),
    revocationsApplied: new Counter({
      name: 'agent_gateway_revocations_applied_total',
      help: 'Revocations this data plane applied from the event bus before a snapshot carried them, by kind (access_token, identity_credential).',
      labelNames: ['kind'],
      registers: [registry],
    }),
    oauthClientAuthFailures: new Counter({
      name: 'agent_gateway_oauth_client_auth_failures_total',
      help: 'Client authentications refused at the OAuth endpoints, by outcome (refused: invalid_client or invalid_request; rate_limited: 429 before any check).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    mcpProxySessions: new Gauge({
      name: 'agent_gateway_mcp_proxy_sessions',
      help: 'MCP proxy sessions open in this process (each with its own upstream session).',
      registers: [registry],
    }),
    mcpProxyMessages: new Counter({
      name: 'agent_gateway_mcp_proxy_messages_total',
      help: 'Messages MCP clients sent to the proxy, by kind (request, notification, response) and protocol era (session: 2025-11-25 and earlier; stateless: 2026-07-28). tools/call decisions are also in agent_gateway_inspect_duration_seconds.',
      labelNames: ['kind', 'era'],
      registers: [registry],
    }),
    limitHits: new Counter({
      name: 'agent_gateway_limit_hits_total',
      help: 'Calls that would have exceeded a usage limit or budget (docs/limits.md), by limit id and action (DENY: refused; REQUIRE_HUMAN: held for approval). Shadow counterfactuals are not counted.',
      labelNames: ['limit_id', 'action'],
      registers: [registry],
    }),
    auditCheckpoints: new Counter({
      name: 'agent_gateway_audit_checkpoints_total',
      help: 'Signed audit checkpoints cut by this process (control plane or start), by trigger (entries, seconds, first: a tenant without one, rotation: a new audit key, demand: POST /api/v1/audit/checkpoint or cutAuditCheckpoint). A cut of an unchanged tree returns the stored checkpoint and is counted too.',
      labelNames: ['trigger'],
      registers: [registry],
    }),
    auditCheckpointFailures: new Counter({
      name: 'agent_gateway_audit_checkpoint_failures_total',
      help: 'Audit checkpoint cuts that failed (logged as "audit checkpoint not cut" with the reason): a tenant whose count stays above zero is not being anchored.',
      registers: [registry],
    }),
    auditSinkDeliveries: new Counter({
      name: 'agent_gateway_audit_sink_deliveries_total',
      help: 'Audit checkpoints handed to each sink (sink: file, http, witness), by outcome (delivered, failed: retried with backoff).',
      labelNames: ['sink', 'outcome'],
      registers: [registry],
    }),
    auditSinkLastAnchored: new Gauge({
      name: 'agent_gateway_audit_sink_last_anchored_timestamp_seconds',
      help: "When the newest checkpoint a sink holds was cut (Unix seconds): time() minus it is how far the sink's anchoring lags.",
      labelNames: ['sink'],
      registers: [registry],
    }),
    auditSinkAnchoredTreeSize: new Gauge({
      name: 'agent_gateway_audit_sink_anchored_tree_size',
      help: "Each tenant's largest audit tree size a sink holds: its entries up to this seq are anchored there (tenant: the tenant's id).",
      labelNames: ['sink', 'tenant'],
      registers: [registry],
    }),
    auditSinkBacklog: new Gauge({
      name: 'agent_gateway_audit_sink_backlog',
      help: 'Checkpoints a sink has not received yet, as its last attempt saw them (at most 100 are read at a time).',
      labelNames: ['sink'],
      registers: [registry],
    }),
    decisions: new DecisionTally(),
  };
}

type InspectChild = ReturnType<GatewayMetrics['inspectDuration']['labels']>;
type ChildTree = Map<string, Map<string, Map<string, InspectChild>>>;
/** Label children by decision, then reason code, then mode. */
const inspectChildren = new WeakMap<GatewayMetrics, ChildTree>();

/**
 * Observes one inspect answer. prom-client hashes a labels object on every observe; the answers'
 * label values come from closed sets, so their children are found in nested maps instead, with
 * no allocation once each combination has been seen.
 */
export function observeInspectDuration(
  metrics: GatewayMetrics,
  answer: { decision: string; reasonCode: string | null; executionMode: string | null },
  seconds: number,
): void {
  let tree = inspectChildren.get(metrics);
  if (!tree) {
    tree = new Map();
    inspectChildren.set(metrics, tree);
  }
  const decision = answer.decision;
  const reason = answer.reasonCode ?? 'none';
  const mode = answer.executionMode ?? 'none';
  let byReason = tree.get(decision);
  if (!byReason) {
    byReason = new Map();
    tree.set(decision, byReason);
  }
  let byMode = byReason.get(reason);
  if (!byMode) {
    byMode = new Map();
    byReason.set(reason, byMode);
  }
  let child = byMode.get(mode);
  if (!child) {
    child = metrics.inspectDuration.labels({ decision, reason_code: reason, mode });
    byMode.set(mode, child);
  }
  child.observe(seconds);
}
