// The one start/stop skeleton of every server process (`start`, `control-plane`, `data-plane`).
// Order matters for operators: configuration and storage problems fail before anything listens;
// the port is taken next (so a port in use fails fast and releases the data directory); what makes
// the process ready (migrations, bootstrap, the first snapshot) runs while /healthz already answers
// and /readyz says why it is not ready yet. Shutdown drains requests, stops the feeds, flushes the
// audit queue and closes the database, in that order; a failed start releases everything it took.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createReadiness, type Readiness } from '../http-edge/health.js';
import { gatewayError } from '../shared/errors/index.js';
import { PublicUrl } from '../shared/public-url.js';
import type { WitnessKey } from '../shared/tlog/index.js';
import { makeDataDirPrivate } from '../storage/engine/data-dir-permissions.js';
import { type Database, openDatabase } from '../storage/engine/database.js';
import { openEventBus } from '../storage/events/index.js';
import type { AuditWriter } from '../storage/tables/audit-writer.js';
import type { GatewayConfig } from './config.js';
import { buildGatewayRuntime, type GatewayRole, type GatewayRuntime } from './gateway-runtime.js';
import { listen } from './listen.js';
import { loadTokenSigningKey } from './token-signing-key.js';

export interface RunningProcess {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly db: Database;
  readonly audit: AuditWriter;
  readonly readiness: Readiness;
  readonly runtime: GatewayRuntime;
  /** Stops accepting requests, drains, flushes the audit queue, closes the database. */
  close(): Promise<void>;
}

/** What differs between the server processes; everything else is the skeleton's. */
export interface ProcessPlan {
  readonly role: GatewayRole;
  /**
   * This process's name in kills (receivedBy, confirmedBy) and in every audit entry it writes
   * (metadata.writtenBy); default `local`.
   */
  readonly processName?: string | undefined;
  /**
   * Reads the process name from the database, opened and not yet used (a data plane's registered
   * name); wins over `processName`. May throw to stop the start (a --name that does not match).
   */
  resolveProcessName?(db: Database): Promise<string | undefined>;
  /** What /readyz says until the process is ready. */
  readonly initialReadiness: string;
  /** After the runtime is built, before listening (e.g. load the persisted snapshot). */
  prepare?(runtime: GatewayRuntime): Promise<void>;
  /** After listening: what makes the process ready. It marks `readiness` (now or later). */
  start(context: {
    runtime: GatewayRuntime;
    db: Database;
    url: string;
    readiness: Readiness;
  }): Promise<void>;
  /** The first step of shutdown, before draining (e.g. stop the configuration stream client). */
  stopFeeds?(): Promise<void>;
}

export async function startProcess(
  config: GatewayConfig,
  logger: Logger,
  plan: ProcessPlan,
): Promise<RunningProcess> {
  // The data directory holds the embedded database, the signing keys and the master key: private
  // to this user before anything is opened in it, however it was made (data-dir-permissions.ts).
  // A control plane on PostgreSQL may have no use for one: it is then not created here.
  const tightened = await makeDataDirPrivate(config.dataDir, {
    create: config.databaseUrl === undefined || plan.role !== 'control-plane',
  });
  if (tightened > 0) {
    logger.warn(
      { dataDir: config.dataDir, entries: tightened },
      'data directory permissions tightened: group and other access removed',
    );
  }
  const db = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
    schema: config.databaseSchema,
    lockOwner: { command: plan.role === 'all' ? 'start' : plan.role },
  });
  logger.info({ storage: db.location }, 'storage opened');
  const readiness = createReadiness();
  readiness.reason = plan.initialReadiness;
  let runtime: GatewayRuntime | undefined;
  try {
    const processName = (await plan.resolveProcessName?.(db)) ?? plan.processName;
    // PostgreSQL: LISTEN/NOTIFY, so subscribers and long-polls see the writes of every process.
    const events = await openEventBus({
      url: config.databaseUrl,
      schema: config.databaseSchema,
      onError: (err, during) => logger.warn({ err, during }, 'event bus problem'),
    });
    try {
      // Every process serving the data plane mints with its own key, kept in its data directory.
      const tokenSigningKey =
        plan.role === 'control-plane' ? undefined : await loadTokenSigningKey(config.dataDir);
      runtime = await buildGatewayRuntime({
        events,
        db,
        logger,
        readiness,
        requireMcpOAuth: config.requireMcpOAuth,
        toolsListWaitMs: config.toolsListWaitMs,
        toolsRefreshIntervalMs: config.toolsRefreshIntervalMs,
        accessLog: config.accessLog,
        graphqlIntrospection: config.graphqlIntrospection,
        killAckWaitMs: config.killAckWaitMs,
        mcpSessionLimits: {
          perSessionInFlight: config.mcpSessionConcurrency,
          perAgentInFlight: config.mcpAgentConcurrency,
        },
        mcpLimits: { maxMessageBytes: config.mcpMaxMessageBytes, listTtlMs: config.mcpListTtlMs },
        streamHeartbeatMs: config.streamHeartbeatMs,
        egress: { policy: config.egress },
        cimdAllowPrivate: config.cimdAllowPrivate,
        auditSinks: {
          file: config.auditSinkFile,
          url: config.auditSinkUrl,
          token: config.auditSinkToken,
          witness: auditWitnessOf(config),
        },
        auditCheckpoint: {
          entries: config.auditCheckpointEntries,
          seconds: config.auditCheckpointSeconds,
        },
        role: plan.role,
        ...(processName ? { processName } : {}),
        publicUrl: new PublicUrl(config.publicUrl),
        ...(tokenSigningKey
          ? { tokenSigningKey, reloadTokenSigningKey: () => loadTokenSigningKey(config.dataDir) }
          : {}),
      });
    } catch (error) {
      await events.close().catch(() => {});
      throw error;
    }
    await plan.prepare?.(runtime);
    const url = await listen(runtime.app, config);
    runtime.publicUrl.learn(url);
    await db.advertise({ command: plan.role === 'all' ? 'start' : plan.role, url });
    // The public URL is the issuer and audience of every token this process mints or accepts:
    // an operator reading the start-up lines sees which one it serves under, and where it came from.
    logger.info(
      {
        url,
        publicUrl: runtime.publicUrl.get(),
        publicUrlFrom: runtime.publicUrl.configured
          ? 'AGENT_GATEWAY_PUBLIC_URL'
          : 'the listening address',
      },
      'listening',
    );
    await plan.start({ runtime, db, url, readiness });
    // Migrated by now: the fan-out (listening since build) handles kills no fan-out propagated.
    await runtime.killFanOut?.start();
    // Migrated and given the master key by now: cut what is due, then follow the appends.
    await runtime.auditCheckpoints?.start();
    runtime.auditSinks?.start();
    const started = runtime;
    let closing: Promise<void> | undefined;
    return {
      url,
      app: started.app,
      db,
      audit: started.audit,
      readiness,
      runtime: started,
      close() {
        closing ??= shutdown(plan, started, db, readiness, logger);
        return closing;
      },
    };
  } catch (error) {
    readiness.ready = false;
    await plan.stopFeeds?.().catch(() => {});
    await runtime?.app.close().catch(() => {});
    await runtime?.stop().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  }
}

/** Marks the process ready and says so once. */
export function markReady(readiness: Readiness, logger: Logger, details: object): void {
  if (readiness.ready) return;
  readiness.ready = true;
  readiness.reason = '';
  logger.info(details, 'ready');
}

async function shutdown(
  plan: ProcessPlan,
  runtime: GatewayRuntime,
  db: Database,
  readiness: Readiness,
  logger: Logger,
): Promise<void> {
  readiness.ready = false;
  readiness.reason = 'shutting down';
  logger.info('shutting down: draining requests');
  await plan.stopFeeds?.();
  await runtime.app.close();
  await runtime.stop();
  logger.info('audit queue flushed');
  await db.close();
  logger.info('stopped');
}

/** The witness of AGENT_GATEWAY_AUDIT_WITNESS_URL and _KEY: both, or neither. */
function auditWitnessOf(config: GatewayConfig): { url: string; key: WitnessKey } | undefined {
  const { auditWitnessUrl: url, auditWitnessKey: key } = config;
  if (url === undefined && key === undefined) return undefined;
  if (url === undefined || key === undefined) {
    throw gatewayError('CONFIG_INVALID', {
      setting:
        url === undefined ? 'AGENT_GATEWAY_AUDIT_WITNESS_URL' : 'AGENT_GATEWAY_AUDIT_WITNESS_KEY',
      problem:
        'the witness sink needs both AGENT_GATEWAY_AUDIT_WITNESS_URL and AGENT_GATEWAY_AUDIT_WITNESS_KEY',
    });
  }
  return { url, key };
}
