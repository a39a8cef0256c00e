// Composes a gateway process without listening or touching the database: the HTTP edge, the data
// plane (every data-plane route, from data-plane/app.ts), the control plane (one plugin), and what
// feeds them — the audit writer, the snapshot store and its publisher, the upstream pool, the
// event bus. The role decides which planes a process serves (docs/architecture.md).
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import { AuditCheckpointer } from '../control-plane/audit/checkpointer.js';
import { FileCheckpointSink } from '../control-plane/audit/file-sink.js';
import { HttpCheckpointSink } from '../control-plane/audit/http-sink.js';
import { auditConsistencyProof } from '../control-plane/audit/proofs.js';
import { AuditSinkRunner, type CheckpointSink } from '../control-plane/audit/sinks.js';
import { WitnessCheckpointSink } from '../control-plane/audit/witness-sink.js';
import type { Caller } from '../control-plane/graphql/context.js';
import { KillFanOut } from '../control-plane/kill/fan-out.js';
import { controlPlanePlugin } from '../control-plane/plugin.js';
import { KeyCustody } from '../control-plane/services/agentiam/custody.js';
import { SnapshotPublisher } from '../control-plane/snapshot/publisher.js';
import { ConfigStreamHub } from '../control-plane/stream/hub.js';
import { HubKillSink } from '../control-plane/stream/kill-sink.js';
import { ToolRefresher } from '../control-plane/tools/refresher.js';
import { DelegationLinkRecorder } from '../data-plane/agentiam/delegation-links.js';
import { buildDataPlaneApp } from '../data-plane/app.js';
import { ExecutionRegistry } from '../data-plane/executions.js';
import { KeyUsageRecorder } from '../data-plane/key-usage.js';
import { createKillApplier, type KillApplier } from '../data-plane/kill/apply-kill.js';
import { KillSwitch } from '../data-plane/kill/kill-switch.js';
import { ListedToolsRecorder } from '../data-plane/listed-tools.js';
import type { ProxyLimits } from '../data-plane/mcp-proxy/dependencies.js';
import { RequestStateKey } from '../data-plane/mcp-proxy/request-state-key.js';
import { ProxySessions, type SessionLimits } from '../data-plane/mcp-proxy/sessions.js';
import { UpstreamSessions } from '../data-plane/mcp-proxy/upstream/index.js';
import { DecisionCountsWriter } from '../data-plane/metrics/decision-counts-writer.js';
import {
  createGatewayMetrics,
  type GatewayMetrics,
} from '../data-plane/metrics/gateway-metrics.js';
import type { AuthFailureLimits } from '../data-plane/oauth/auth-failure-limiter.js';
import { followKeyRotation } from '../data-plane/oauth/follow-key-rotation.js';
import { createForwardingTokenMinter } from '../data-plane/oauth/forwarding-tokens.js';
import { IssuedTokenRecorder } from '../data-plane/oauth/issued-tokens.js';
import { MetadataDocuments } from '../data-plane/oauth/metadata-documents.js';
import { RevokedTokens } from '../data-plane/oauth/revocations.js';
import { TokenSigner, type TokenSigningKeyMaterial } from '../data-plane/oauth/token-signer.js';
import { findPresentedKey } from '../data-plane/plugins/auth.js';
import { type SnapshotApplyResult, SnapshotStore } from '../data-plane/store/snapshot-store.js';
import {
  createEgressConnector,
  createUpstreamClient,
  resolveWithDns,
  type UpstreamClient,
  type UpstreamClientOptions,
  type UpstreamEgress,
} from '../data-plane/upstream/index.js';
import type { Readiness } from '../http-edge/health.js';
import { RefusalAuditor, type RefusalAuditorOptions } from '../http-edge/refusal-auditor.js';
import { buildServer } from '../http-edge/server.js';
import {
  type EgressPolicy,
  type EgressResolver,
  EMPTY_EGRESS_POLICY,
  egressRefusalEntry,
  splitServerKey,
} from '../shared/egress/index.js';
import {
  createEventBus,
  EVENT_TYPES,
  type EventBus,
  followEvents,
  publishAuditEntries,
} from '../shared/events/index.js';
import { PublicUrl } from '../shared/public-url.js';
import type { ConfigSnapshot } from '../shared/snapshot/index.js';
import type { WitnessKey } from '../shared/tlog/index.js';
import type { Database } from '../storage/engine/database.js';
import { addCosignatures } from '../storage/tables/audit-checkpoints.js';
import { type AuditWriter, createAuditWriter } from '../storage/tables/audit-writer.js';
import { localReporter } from '../storage/tables/decision-counts.js';
import { withStorableText } from '../storage/tables/storable-audit.js';
import { registerTokenSigningKey } from './token-signing-key.js';

/** The egress refusals of the HTTP checkpoint sink are logged under this key (no server). */
const AUDIT_SINK_EGRESS_KEY = 'audit-sink';
const SINK_CONNECT_TIMEOUT_MS = 10_000;

/** The parts of a running gateway: the HTTP app, the in-memory configuration and its feeders. */
export interface GatewayRuntime {
  readonly app: FastifyInstance;
  readonly audit: AuditWriter;
  /** Audits refusals, bounded (docs/security.md, "Refusal auditing"); closed by `stop()`. */
  readonly refusals: RefusalAuditor;
  readonly store: SnapshotStore;
  readonly publisher: SnapshotPublisher;
  /** Learns MCP servers' tool definitions; `start()` it beside the publisher. */
  readonly toolRefresher: ToolRefresher;
  /** Learns tool definitions from the tools/list answers inspect forwards. */
  readonly listedTools: ListedToolsRecorder;
  readonly upstream: UpstreamClient;
  readonly executions: ExecutionRegistry;
  readonly metrics: GatewayMetrics;
  /** Approval and audit events (subscriptions, long-polls); closed by `stop()`. */
  readonly events: EventBus;
  /** The configuration stream to remote data planes (role `control-plane` only). */
  readonly configStream: ConfigStreamHub | undefined;
  /** Configured, or learnt when the process listens (runtime/process.ts). */
  readonly publicUrl: PublicUrl;
  /**
   * The tenant CA keys' custodian. Signing waits for its master key: given as an option, or
   * handed over at start once checked against the sealed keys (runtime/master-key.ts).
   */
  readonly keyCustody: KeyCustody;
  /** The MCP proxy's requestState key, derived from the master key once it is known. */
  readonly requestStateKey: RequestStateKey;
  /**
   * Hands the master key to every part that needs it: the CA keys' custodian and the proxy's
   * requestState key (a data plane, which signs nothing, calls requestStateKey.useMasterKey).
   */
  useMasterKey(key: Buffer, source: string): void;
  /** The access-token signer of a process serving the data plane with a signing key. */
  readonly tokenSigner: TokenSigner | undefined;
  /** Writes issued access tokens (IssuedToken rows) in batches; flushed by `stop()`. */
  readonly issuedTokens: IssuedTokenRecorder;
  /** Records the delegation links this process verified (the kill switch revokes them). */
  readonly delegationLinks: DelegationLinkRecorder;
  /**
   * The jtis this process refuses before a snapshot lists them: revoked here, or heard revoked
   * elsewhere (data-plane/remote/revocation-follower.ts).
   */
  readonly revokedTokens: RevokedTokens;
  /** Applies kill deltas to this process's store, executions and upstream sessions. */
  readonly killApplier: KillApplier;
  /** The receiver's side of the kill switch (REST kill, GraphQL killAgent). */
  readonly killSwitch: KillSwitch;
  /**
   * The control plane's fan-out of committed kills (roles `all` and `control-plane`): listening
   * from build on; `start()` it once migrated to handle kills no fan-out propagated yet.
   */
  readonly killFanOut: KillFanOut | undefined;
  /**
   * Cuts the tenants' signed audit checkpoints (roles `all` and `control-plane`); `start()` it
   * once migrated and given the master key. Data planes never sign.
   */
  readonly auditCheckpoints: AuditCheckpointer | undefined;
  /** Hands every checkpoint to the configured sinks (roles `all`, `control-plane`); `start()` it with the checkpointer. */
  readonly auditSinks: AuditSinkRunner | undefined;
  /** This process's name: a kill's receivedBy and its confirmation, every audit entry's metadata.writtenBy (default `local`). */
  readonly processName: string;
  /**
   * Writes the in-process data plane's decision tally (role `all`); `start()` it once migrated.
   * A remote data plane reports its tally over the config stream instead.
   */
  readonly decisionCounts: DecisionCountsWriter | undefined;
  /**
   * Upserts the signing key's public half into token_signing_keys (a no-op without a key): call
   * it after migrations and before the first snapshot is built, so the JWKS lists the key.
   */
  registerTokenSigningKey(): Promise<void>;
  /** Stops the publisher, the audit writer and the upstream pool (not the app, not the db). */
  stop(): Promise<void>;
}

/**
 * `all`: both planes in one process, the store fed by the in-process publisher.
 * `control-plane`: GraphQL and the configuration stream, no data-plane routes.
 * `data-plane`: data-plane routes only; the publisher is never started, a remote client
 * (data-plane/remote) feeds the store.
 */
export type GatewayRole = 'all' | 'control-plane' | 'data-plane';

export interface GatewayRuntimeOptions {
  readonly db: Database;
  readonly logger: Logger;
  readonly readiness: Readiness;
  readonly snapshotPollIntervalMs?: number;
  readonly upstream?: UpstreamClientOptions;
  readonly requireMcpOAuth?: boolean;
  /** How long registering or changing an MCP server waits for its tools/list (default 2000). */
  readonly toolsListWaitMs?: number;
  /** Period of the refresh of every server's tool definitions (default 300000). */
  readonly toolsRefreshIntervalMs?: number;
  /** Default `all`. */
  readonly role?: GatewayRole;
  readonly defaultMetrics?: boolean;
  /** Fastify's per-request log lines (AGENT_GATEWAY_ACCESS_LOG); decisions are logged anyway. */
  readonly accessLog?: boolean;
  /** AGENT_GATEWAY_GRAPHQL_INTROSPECTION: introspection for authenticated keys; default on. */
  readonly graphqlIntrospection?: boolean;
  /** The event bus; the runtime owns it (closes it on stop). Default: in-process. */
  readonly events?: EventBus;
  /** The public base URL; default: learnt from the listening socket (`publicUrl.learn`). */
  readonly publicUrl?: PublicUrl;
  /** The master key sealing the tenant CA keys, when known at build time (tests). */
  readonly masterKey?: { readonly key: Buffer; readonly source: string };
  /**
   * The access-token signing key (runtime/token-signing-key.ts) of a process serving the data
   * plane. Without it, forwards under oauthMode mcp_as fail closed with MCP_OAUTH_UNAVAILABLE.
   */
  readonly tokenSigningKey?: TokenSigningKeyMaterial;
  /**
   * Reads the key file again (runtime/token-signing-key.ts): with it, the process switches to a
   * rotated key once a snapshot retires the one it signs with (data-plane/oauth/follow-key-rotation.ts).
   */
  readonly reloadTokenSigningKey?: () => Promise<TokenSigningKeyMaterial>;
  /** Failed OAuth client authentications per client id and address (production defaults). */
  readonly oauthAuthFailureLimits?: AuthFailureLimits;
  /** This process's name in kills (receivedBy, confirmedBy); default `local`. */
  readonly processName?: string;
  /** Kill switch waits (defaults: 2000 ms for the propagation, 250 ms for acknowledgements). */
  readonly killPropagationWaitMs?: number;
  readonly killAckWaitMs?: number;
  /** MCP proxy concurrency limits (calls in flight per session and per agent). */
  readonly mcpSessionLimits?: Partial<SessionLimits>;
  /** MCP proxy message size and timeouts. */
  readonly mcpLimits?: Partial<ProxyLimits>;
  /** The configuration stream's heartbeat (default the protocol's 15 s). */
  readonly streamHeartbeatMs?: number;
  /**
   * The egress policy of every upstream connection (AGENT_GATEWAY_EGRESS_ALLOW / _DENY; default
   * the built-in one) and how host names are resolved (default node's dns.lookup, all
   * addresses; tests inject a table).
   */
  readonly egress?: { readonly policy?: EgressPolicy; readonly resolve?: EgressResolver };
  /** AGENT_GATEWAY_CIMD_ALLOW_PRIVATE: client ID metadata documents from private addresses too. */
  readonly cimdAllowPrivate?: boolean;
  /** Trusted CAs of metadata document fetches beyond the system's (tests). */
  readonly cimdCa?: string;
  /** The metadata document fetch's time limit (default 5 s; tests shorten it). */
  readonly cimdTimeoutMs?: number;
  /** When checkpoints are cut (AGENT_GATEWAY_AUDIT_CHECKPOINT_ENTRIES, _SECONDS). */
  readonly auditCheckpoint?: { readonly entries?: number; readonly seconds?: number };
  /** Where checkpoints go (AGENT_GATEWAY_AUDIT_SINK_FILE); none by default. */
  readonly auditSinks?: {
    readonly file?: string | undefined;
    readonly url?: string | undefined;
    readonly token?: string | undefined;
    /** A C2SP tlog-witness: its submission prefix and verifier key. */
    readonly witness?: { readonly url: string; readonly key: WitnessKey } | undefined;
    /** The first retry's delay after a failed delivery (default 1 s; tests shorten it). */
    readonly retryMinMs?: number | undefined;
  };
  /** Refusal auditing's clock and bounds (tests move the clock past a window). */
  readonly refusalAudit?: Omit<RefusalAuditorOptions, 'audit' | 'logger'>;
}

export async function buildGatewayRuntime(options: GatewayRuntimeOptions): Promise<GatewayRuntime> {
  const { db, logger } = options;
  const role = options.role ?? 'all';
  const accessLog = options.accessLog ?? false;
  const publicUrl = options.publicUrl ?? new PublicUrl();
  const keyCustody = new KeyCustody();
  const requestStateKey = new RequestStateKey();
  const useMasterKey = (key: Buffer, source: string) => {
    keyCustody.useMasterKey(key, source);
    requestStateKey.useMasterKey(key);
  };
  if (options.masterKey) useMasterKey(options.masterKey.key, options.masterKey.source);
  const metrics = createGatewayMetrics({ defaultMetrics: options.defaultMetrics });
  const events = options.events ?? createEventBus();
  const processName = options.processName ?? 'local';
  const publishEntries = publishAuditEntries(events);
  // Built below (it needs the public URL and the key custody); appends start after that.
  let auditCheckpoints: AuditCheckpointer | undefined;
  // Request data in an entry is stored in the storable encoding: a deny is never refused for it.
  const audit = withStorableText(
    createAuditWriter(db, {
      // Every entry names the process that wrote it (metadata.writtenBy).
      writtenBy: processName,
      onCommitted: (entries) => {
        publishEntries(entries);
        // The checkpointer grows the tree from what this process committed (memory, not reads).
        auditCheckpoints?.noteCommitted(entries);
      },
      onFlush(info) {
        metrics.auditFlushDuration.observe(info.durationMs / 1000);
        metrics.auditFlushEntries.inc(info.entries);
      },
      onFlushError(info) {
        logger.error({ err: info.error, entries: info.entries }, 'audit flush failed');
      },
    }),
  );
  const refusals = new RefusalAuditor({ ...options.refusalAudit, audit, logger });
  const store = new SnapshotStore();
  store.onApply((snapshot) => metrics.snapshotVersion.set(snapshot.version));
  const publisher = new SnapshotPublisher(
    db,
    { apply: (snapshot) => applySnapshot(store, snapshot, metrics, logger) },
    { logger, pollIntervalMs: options.snapshotPollIntervalMs },
  );
  const egress: UpstreamEgress = {
    policy: options.egress?.policy ?? EMPTY_EGRESS_POLICY,
    resolve: options.egress?.resolve ?? resolveWithDns,
    // Every refused connection is audited before it fails (the forward answers after it).
    async onRefused(refusal, serverKey) {
      const server = splitServerKey(serverKey);
      logger.warn({ serverKey, ...refusal }, 'egress refused: upstream address forbidden');
      if (server === null) return;
      await audit.append(egressRefusalEntry({ ...server, refusal, stage: 'connect' }));
    },
  };
  const upstream = createUpstreamClient({ ...options.upstream, egress });
  const toolRefresher = new ToolRefresher({
    db,
    listTools: (target, signal) => upstream.listToolDefinitions(target, { signal }),
    publish: () => publisher.publishNow(),
    audit,
    events,
    waitMs: options.toolsListWaitMs,
    intervalMs: options.toolsRefreshIntervalMs,
    logger,
    onOutcome: (trigger, outcome) => metrics.toolRefreshes.inc({ trigger, outcome }),
  });
  const listedTools = new ListedToolsRecorder(db, {
    // With both planes here, serve what was learnt at once; a data plane alone leaves it to the
    // control plane, which notices the bumped configVersion.
    ...(role === 'all' ? { onChanged: () => publisher.publishNow() } : {}),
    onOutcome: (outcome) => metrics.toolRefreshes.inc({ trigger: 'passthrough', outcome }),
    // A changed tool is held from the next call on, before the snapshot recording it.
    onObserved: (source, tools) => store.notePinObservations(source, tools),
    audit,
    events,
    logger,
  });
  const executions = new ExecutionRegistry();
  const keyUsage = new KeyUsageRecorder(db, { logger });
  const issuedTokens = new IssuedTokenRecorder(db, { logger });
  const delegationLinks = new DelegationLinkRecorder(db, { logger });
  const revokedTokens = new RevokedTokens();
  const mcpSessions = new ProxySessions(options.mcpSessionLimits, (open) =>
    metrics.mcpProxySessions.set(open),
  );
  const mcpUpstreamSessions = new UpstreamSessions({ egress });
  const killApplier = createKillApplier({
    store,
    executions,
    upstream,
    proxySessions: mcpSessions,
    logger,
  });
  const killSwitch = new KillSwitch({
    db,
    audit,
    events,
    applier: killApplier,
    processName,
    propagationWaitMs: options.killPropagationWaitMs,
    confirmationWaitMs: options.killAckWaitMs,
    logger,
  });
  // Started listening now, before anything serves, so no committed kill goes unnoticed; in role
  // `all` the in-process store is the one data plane and confirms under this process's name.
  const killFanOut =
    role === 'data-plane'
      ? undefined
      : new KillFanOut({
          db,
          events,
          custody: keyCustody,
          publicUrl,
          logger,
          applyLocally: (delta) => killApplier.apply(delta),
          ...(role === 'all' ? { localName: processName } : {}),
          ackWaitMs: options.killAckWaitMs,
        });
  killFanOut?.listen();
  const tokenSigner =
    options.tokenSigningKey && role !== 'control-plane'
      ? await TokenSigner.create(options.tokenSigningKey, publicUrl)
      : undefined;
  if (tokenSigner && options.reloadTokenSigningKey) {
    followKeyRotation({
      signer: tokenSigner,
      store,
      reload: options.reloadTokenSigningKey,
      logger,
    });
  }
  // A control plane alone serves the HTTP edge without data-plane routes.
  const app =
    role === 'control-plane'
      ? await buildServer({ logger, readiness: options.readiness, metrics, accessLog, refusals })
      : await buildDataPlaneApp({
          logger,
          readiness: options.readiness,
          metrics,
          accessLog,
          refusals,
          store,
          db,
          audit,
          upstream,
          executions,
          events,
          requireMcpOAuth: options.requireMcpOAuth ?? false,
          onKeyUse: (keyId) => keyUsage.record(keyId),
          listedTools,
          publicUrl,
          killSwitch,
          agentIam: { onChainVerified: delegationLinks.onChainVerified },
          mcpSessions,
          mcpUpstreamSessions,
          mcpLimits: options.mcpLimits,
          requestStateKey,
          mintAccessToken: tokenSigner
            ? createForwardingTokenMinter(tokenSigner, issuedTokens, {
                revoked: revokedTokens,
                onMinted: () => metrics.oauthTokensIssued.inc({ kind: 'forward' }),
              })
            : undefined,
          oauth: {
            signer: tokenSigner,
            issuedTokens,
            authFailureLimits: options.oauthAuthFailureLimits,
            revoked: revokedTokens,
            metadataDocuments: new MetadataDocuments({
              egress,
              allowPrivate: options.cimdAllowPrivate ?? false,
              ca: options.cimdCa,
              ...(options.cimdTimeoutMs === undefined ? {} : { timeoutMs: options.cimdTimeoutMs }),
            }),
          },
        });
  let configStream: ConfigStreamHub | undefined;
  let stopRevocationPublish: (() => Promise<void>) | undefined;
  if (role === 'control-plane') {
    configStream = new ConfigStreamHub({
      heartbeatMs: options.streamHeartbeatMs,
      onBehind: (version) => {
        publisher.publishAbove(version).catch((error: unknown) => {
          logger.error({ err: error }, 'configuration snapshot build failed');
        });
      },
    });
    publisher.addSink(configStream);
    // A revocation committed by a data plane bumped configVersion: publish now rather than at the
    // next fingerprint poll, so the snapshot follows the event the data planes already applied.
    stopRevocationPublish = publishOnRevocation(events, publisher, logger);
    // Kill deltas go to the connected data planes, which acknowledge them on the ack endpoint.
    killFanOut?.addSink(new HubKillSink(configStream));
  }
  // With both planes here, the tally goes straight to the database (and before each decisionStats).
  const decisionCounts =
    role === 'all'
      ? new DecisionCountsWriter({
          db,
          tally: metrics.decisions,
          reporter: localReporter(processName),
          logger,
        })
      : undefined;
  auditCheckpoints =
    role === 'data-plane'
      ? undefined
      : new AuditCheckpointer({
          db,
          custody: keyCustody,
          publicUrl,
          events,
          logger,
          // `start` appends itself: its writer hands the commits over instead of the bus.
          followBus: role === 'control-plane',
          entries: options.auditCheckpoint?.entries,
          seconds: options.auditCheckpoint?.seconds,
          onCut: (trigger) => {
            metrics.auditCheckpoints.inc({ trigger });
            auditSinks?.nudge();
          },
          onFailure: () => metrics.auditCheckpointFailures.inc(),
        });
  // The egress policy decides a sink's address as it decides an upstream's.
  const sinkDispatcher = () =>
    new Agent({
      connect: createEgressConnector(egress, AUDIT_SINK_EGRESS_KEY, SINK_CONNECT_TIMEOUT_MS),
    });
  const sinks: CheckpointSink[] = [];
  if (options.auditSinks?.file) sinks.push(new FileCheckpointSink(options.auditSinks.file));
  if (options.auditSinks?.url) {
    sinks.push(
      new HttpCheckpointSink({
        url: options.auditSinks.url,
        token: options.auditSinks.token,
        dispatcher: sinkDispatcher(),
      }),
    );
  }
  if (options.auditSinks?.witness) {
    sinks.push(
      new WitnessCheckpointSink({
        ...options.auditSinks.witness,
        dispatcher: sinkDispatcher(),
        consistency: async (tenantId, first, second) =>
          (await auditConsistencyProof(db, tenantId, first, second)).hashes,
        store: (checkpointId, lines) => addCosignatures(db, checkpointId, lines),
        logger,
      }),
    );
  }
  // A re-signed checkpoint (a rotation) may be delivered after a larger one: the gauge keeps the
  // largest size each sink holds per tenant.
  const anchoredSizes = new Map<string, number>();
  const anchored = (sink: string, tenant: string, treeSize: number) => {
    const key = `${sink} ${tenant}`;
    if (treeSize < (anchoredSizes.get(key) ?? 0)) return;
    anchoredSizes.set(key, treeSize);
    metrics.auditSinkAnchoredTreeSize.set({ sink, tenant }, treeSize);
  };
  const auditSinks =
    role === 'data-plane' || sinks.length === 0
      ? undefined
      : new AuditSinkRunner({
          db,
          sinks,
          logger,
          ...(options.auditSinks?.retryMinMs === undefined
            ? {}
            : { retryMinMs: options.auditSinks.retryMinMs }),
          onResume(sink, standing) {
            if (standing.lastAnchoredAt !== null) {
              metrics.auditSinkLastAnchored.set(
                { sink: sink.kind },
                standing.lastAnchoredAt.getTime() / 1000,
              );
            }
            for (const { tenantId, treeSize } of standing.tenants) {
              anchored(sink.kind, tenantId, treeSize);
            }
          },
          onOutcome({ sink, checkpoint, ok, backlog }) {
            metrics.auditSinkDeliveries.inc({
              sink: sink.kind,
              outcome: ok ? 'delivered' : 'failed',
            });
            metrics.auditSinkBacklog.set({ sink: sink.kind }, backlog);
            if (ok) {
              anchored(sink.kind, checkpoint.tenantId, checkpoint.treeSize);
              metrics.auditSinkLastAnchored.set(
                { sink: sink.kind },
                checkpoint.createdAt.getTime() / 1000,
              );
            }
          },
        });
  if (role !== 'data-plane') {
    await app.register(controlPlanePlugin, {
      auditCheckpoints,
      auditSinks,
      db,
      audit,
      publisher,
      tools: toolRefresher,
      egress,
      events,
      configStream,
      publicUrl,
      keyCustody,
      authenticate: (authorization) => authenticateCaller(authorization, store),
      onKeysChanged: (listener) => store.onApply(() => listener()),
      killAgent: (input) => killSwitch.kill(input).then((outcome) => outcome.answer),
      flushDecisionStats: decisionCounts ? () => decisionCounts.flush() : undefined,
      introspection: options.graphqlIntrospection,
    });
  }
  return {
    app,
    audit,
    refusals,
    store,
    publisher,
    toolRefresher,
    listedTools,
    upstream,
    executions,
    metrics,
    events,
    configStream,
    publicUrl,
    keyCustody,
    requestStateKey,
    useMasterKey,
    tokenSigner,
    issuedTokens,
    delegationLinks,
    revokedTokens,
    killApplier,
    killSwitch,
    killFanOut,
    auditCheckpoints,
    auditSinks,
    processName,
    decisionCounts,
    async registerTokenSigningKey() {
      if (options.tokenSigningKey && role !== 'control-plane') {
        await registerTokenSigningKey(db, options.tokenSigningKey);
      }
    },
    async stop() {
      await killFanOut?.stop();
      await auditCheckpoints?.stop();
      await auditSinks?.stop();
      await stopRevocationPublish?.();
      publisher.stop();
      await toolRefresher.stop();
      await listedTools.idle();
      configStream?.close();
      await keyUsage.stop();
      await issuedTokens.stop();
      await delegationLinks.stop();
      await decisionCounts?.stop();
      await refusals.close();
      await audit.close();
      await upstream.close();
      mcpSessions.closeAll();
      await mcpUpstreamSessions.close();
      await events.close();
    },
  };
}

/**
 * Applies a snapshot to the store, counting and logging what happened: every process feeds its
 * store through here, from the in-process publisher or the configuration stream client.
 */
export function applySnapshot(
  store: SnapshotStore,
  snapshot: ConfigSnapshot,
  metrics: GatewayMetrics,
  logger: Logger,
): SnapshotApplyResult {
  const result = store.apply(snapshot);
  metrics.snapshotApplied.inc({ result: result.applied ? 'applied' : 'rejected' });
  if (!result.applied) {
    logger.warn({ version: result.version, reason: result.reason }, 'snapshot rejected');
    return result;
  }
  for (const rejected of result.rejectedTenants) {
    metrics.snapshotApplied.inc({ result: 'tenant_rejected' });
    logger.warn(
      { version: result.version, ...rejected },
      'tenant configuration rejected; keeping its last good state',
    );
  }
  return result;
}

/** The GraphQL caller of an API key, checked exactly as the data plane checks it. */
function authenticateCaller(authorization: string | undefined, store: SnapshotStore): Caller {
  const key = findPresentedKey(authorization, store.current);
  return {
    tenantId: key.tenant.id,
    tenantName: key.tenant.name,
    keyId: key.id,
    scopes: key.scopes,
    expiresAtMs: key.expiresAtMs,
  };
}

/** Rebuilds the snapshot whenever a revocation is announced; returns the stop. */
function publishOnRevocation(
  events: Pick<EventBus, 'subscribe'>,
  publisher: Pick<SnapshotPublisher, 'publishNow'>,
  logger: Logger,
): () => Promise<void> {
  const failed = (error: unknown) =>
    logger.error({ err: error }, 'configuration snapshot build failed');
  return followEvents(
    events,
    EVENT_TYPES.REVOCATION_COMMITTED,
    () => {
      publisher.publishNow().catch(failed);
    },
    failed,
  );
}
