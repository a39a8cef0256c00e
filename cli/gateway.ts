// `agent-gateway start`: both planes in one process on one port. Order matters for operators:
// configuration and storage problems fail before anything listens; the port is taken next (so a
// port in use fails fast and releases the data directory); migrations and the first-start
// bootstrap run while /healthz already answers and /readyz says why it is not ready yet.
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import {
  createEventBus,
  type EventBus,
  LocalEventBus,
  publishAuditEntries,
} from '../control-plane/events/index.js';
import { graphqlPlugin } from '../control-plane/graphql/server.js';
import { ensureDefaultTenant } from '../control-plane/services/bootstrap.js';
import { LocalSnapshotPublisher } from '../control-plane/snapshot/local-publisher.js';
import { ConfigStreamHub } from '../control-plane/stream/hub.js';
import { configStreamPlugin } from '../control-plane/stream/plugin.js';
import { buildDataPlaneApp } from '../data-plane/app.js';
import { ExecutionRegistry } from '../data-plane/executions.js';
import { KeyUsageRecorder } from '../data-plane/key-usage.js';
import { authPlugin } from '../data-plane/plugins/auth.js';
import { createReadiness, type Readiness } from '../data-plane/plugins/health.js';
import {
  createGatewayMetrics,
  type GatewayMetrics,
  metricsPlugin,
} from '../data-plane/plugins/metrics.js';
import { ApprovalNotifier } from '../data-plane/routes/inspect/approval-notifier.js';
import { inspectPlugin } from '../data-plane/routes/inspect/index.js';
import { SnapshotStore } from '../data-plane/store/snapshot-store.js';
import {
  createUpstreamClient,
  type UpstreamClient,
  type UpstreamClientOptions,
} from '../data-plane/upstream/index.js';
import { GatewayError } from '../shared/errors/index.js';
import { type AuditWriter, createAuditWriter } from '../storage/audit-writer.js';
import { type Database, openDatabase } from '../storage/database.js';
import { StorageError } from '../storage/errors.js';
import { migrateDatabase } from '../storage/migrations.js';
import type { GatewayConfig } from './config.js';
import { writeSecretFile } from './secret-file.js';

export const ADMIN_KEY_FILE = 'admin-api-key';

/** The parts of a running gateway: the HTTP app, the in-memory configuration and its feeders. */
export interface GatewayRuntime {
  readonly app: FastifyInstance;
  readonly audit: AuditWriter;
  readonly store: SnapshotStore;
  readonly publisher: LocalSnapshotPublisher;
  readonly upstream: UpstreamClient;
  readonly executions: ExecutionRegistry;
  readonly metrics: GatewayMetrics;
  readonly approvals: ApprovalNotifier;
  /** Approval and audit events (subscriptions); closed by `stop()`. */
  readonly events: EventBus;
  /** The configuration stream to remote data planes (role `control-plane` only). */
  readonly configStream: ConfigStreamHub | undefined;
  /** Stops the publisher, the audit writer and the upstream pool (not the app, not the db). */
  stop(): Promise<void>;
}

export type GatewayRole = 'all' | 'control-plane' | 'data-plane';

export interface GatewayRuntimeOptions {
  readonly db: Database;
  readonly logger: Logger;
  readonly readiness: Readiness;
  readonly snapshotPollIntervalMs?: number;
  readonly upstream?: UpstreamClientOptions;
  readonly requireMcpOAuth?: boolean;
  /**
   * `all` (default): both planes in one process, the store fed by the in-process publisher.
   * `control-plane`: GraphQL and the configuration stream, no data-plane routes.
   * `data-plane`: data-plane routes only; the publisher is never started, a remote client
   * (data-plane/remote) feeds the store.
   */
  readonly role?: GatewayRole;
  readonly defaultMetrics?: boolean;
  /** The event bus; the runtime owns it (closes it on stop). Default: in-process. */
  readonly events?: EventBus;
}

/**
 * Assembles the single-process gateway without listening or touching the database: the data
 * plane app with every route, fed by an in-process snapshot publisher. Call `publisher.start()`
 * once the database is migrated.
 */
export async function buildGatewayRuntime(options: GatewayRuntimeOptions): Promise<GatewayRuntime> {
  const { db, logger } = options;
  const metrics = createGatewayMetrics({ defaultMetrics: options.defaultMetrics });
  const events = options.events ?? new LocalEventBus();
  const audit = createAuditWriter(db, {
    onCommitted: publishAuditEntries(events),
    onFlush(info) {
      metrics.auditFlushDuration.observe(info.durationMs / 1000);
      metrics.auditFlushEntries.inc(info.entries);
    },
    onFlushError(info) {
      logger.error({ err: info.error, entries: info.entries }, 'audit flush failed');
    },
  });
  const store = new SnapshotStore();
  store.onApply((snapshot) => metrics.snapshotVersion.set(snapshot.version));
  const publisher = new LocalSnapshotPublisher(
    db,
    {
      apply(snapshot) {
        const result = store.apply(snapshot);
        metrics.snapshotApplied.inc({ result: result.applied ? 'applied' : 'rejected' });
        if (!result.applied) {
          logger.warn({ version: result.version, reason: result.reason }, 'snapshot rejected');
        }
        return result;
      },
    },
    { logger, pollIntervalMs: options.snapshotPollIntervalMs },
  );
  const upstream = createUpstreamClient(options.upstream);
  const executions = new ExecutionRegistry();
  const approvals = new ApprovalNotifier();
  const keyUsage = new KeyUsageRecorder(db, { logger });
  const app = await buildDataPlaneApp({ logger, readiness: options.readiness });
  await app.register(authPlugin);
  await app.register(metricsPlugin, { metrics });
  const role = options.role ?? 'all';
  if (role !== 'control-plane') {
    await app.register(inspectPlugin, {
      store,
      db,
      audit,
      upstream,
      executions,
      metrics,
      approvals,
      events,
      requireMcpOAuth: options.requireMcpOAuth ?? false,
      onKeyUse: (keyId) => keyUsage.record(keyId),
    });
  }
  if (role !== 'data-plane') {
    await app.register(graphqlPlugin, { db, audit, store, publisher, approvals, events });
  }
  let configStream: ConfigStreamHub | undefined;
  if (role === 'control-plane') {
    const hub = new ConfigStreamHub({
      onBehind: (version) => {
        publisher.publishAbove(version).catch((error: unknown) => {
          logger.error({ err: error }, 'configuration snapshot build failed');
        });
      },
    });
    publisher.addSink(hub);
    await app.register(configStreamPlugin, { db, hub });
    configStream = hub;
  }
  return {
    app,
    audit,
    store,
    publisher,
    upstream,
    executions,
    metrics,
    approvals,
    events,
    configStream,
    async stop() {
      publisher.stop();
      configStream?.close();
      await keyUsage.stop();
      await audit.close();
      await upstream.close();
      await events.close();
    },
  };
}

export interface RunningGateway {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly db: Database;
  readonly audit: AuditWriter;
  readonly readiness: Readiness;
  readonly runtime: GatewayRuntime;
  /** Stops accepting requests, drains, flushes the audit queue, closes the database. */
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  readonly logger: Logger;
  /** Called once with the admin key when the first start creates it. */
  readonly onAdminKeyCreated?: (key: string, file: string) => void;
  /** `all` for `start`, `control-plane` for `agent-gateway control-plane`. */
  readonly role?: 'all' | 'control-plane';
}

/**
 * The event bus of a process configured by `config`: PostgreSQL LISTEN/NOTIFY when the database is
 * a server, so subscribers see the writes of every process sharing it; in-process otherwise.
 */
export function openEventBus(config: GatewayConfig, logger: Logger): Promise<EventBus> {
  return createEventBus({
    url: config.databaseUrl,
    schema: config.databaseSchema,
    onError: (err, during) => logger.warn({ err, during }, 'event bus connection problem'),
  });
}

export async function startGateway(
  config: GatewayConfig,
  options: StartGatewayOptions,
): Promise<RunningGateway> {
  const { logger } = options;
  const db = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
    schema: config.databaseSchema,
    lockOwner: { command: options.role ?? 'start' },
  });
  logger.info({ storage: db.location }, 'storage opened');
  const readiness = createReadiness();
  let runtime: GatewayRuntime | undefined;
  let events: EventBus | undefined;
  try {
    events = await openEventBus(config, logger);
    runtime = await buildGatewayRuntime({
      events,
      db,
      logger,
      readiness,
      requireMcpOAuth: config.requireMcpOAuth,
      role: options.role ?? 'all',
    });
    const { app, audit } = runtime;
    const url = await listen(app, config);
    await db.advertise({ command: 'start', url });
    logger.info({ url }, 'listening');

    readiness.reason = 'applying migrations';
    const migrated = await migrateDatabase(db);
    logger.info(
      { applied: migrated.applied, alreadyApplied: migrated.alreadyApplied },
      migrated.applied.length > 0 ? 'migrations applied' : 'database schema up to date',
    );

    readiness.reason = 'bootstrapping';
    const bootstrap = await ensureDefaultTenant(db, audit);
    if (bootstrap.adminKey) {
      const file = join(config.dataDir, ADMIN_KEY_FILE);
      await writeKeyFile(file, bootstrap.adminKey.key);
      logger.info(
        { tenantId: bootstrap.tenantId, keyPrefix: bootstrap.adminKey.prefix, file },
        'first start: created tenant "default" and its admin API key',
      );
      options.onAdminKeyCreated?.(bootstrap.adminKey.key, file);
    }
    readiness.reason = 'loading configuration';
    await runtime.publisher.start();
    readiness.ready = true;
    readiness.reason = '';
    logger.info({ url }, 'ready');
    const started = runtime;
    let closing: Promise<void> | undefined;
    return {
      url,
      app,
      db,
      audit,
      readiness,
      runtime: started,
      close() {
        closing ??= shutdown(started, db, readiness, logger);
        return closing;
      },
    };
  } catch (error) {
    readiness.ready = false;
    await runtime?.app.close().catch(() => {});
    await runtime?.stop().catch(() => {});
    if (!runtime) await events?.close().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  }
}

export async function listen(app: FastifyInstance, config: GatewayConfig): Promise<string> {
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${config.host}:${config.port}`;
    if (code === 'EADDRINUSE') {
      throw new GatewayError('SERVER_PORT_IN_USE', `${where} is already in use`, { cause: error });
    }
    throw new GatewayError(
      'SERVER_LISTEN_FAILED',
      `cannot listen on ${where}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${port}`;
}

async function writeKeyFile(file: string, key: string): Promise<void> {
  try {
    // Creates the data directory too: with PostgreSQL nothing else has created it yet.
    await writeSecretFile(file, key);
  } catch (error) {
    throw new StorageError(
      'STORAGE_DATA_DIR_UNWRITABLE',
      `cannot write the admin API key to ${file}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

async function shutdown(
  runtime: GatewayRuntime,
  db: Database,
  readiness: Readiness,
  logger: Logger,
): Promise<void> {
  readiness.ready = false;
  readiness.reason = 'shutting down';
  logger.info('shutting down: draining requests');
  await runtime.app.close();
  await runtime.stop();
  logger.info('audit queue flushed');
  await db.close();
  logger.info('stopped');
}
