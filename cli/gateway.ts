// `agent-gateway start`: both planes in one process on one port. Order matters for operators:
// configuration and storage problems fail before anything listens; the port is taken next (so a
// port in use fails fast and releases the data directory); migrations and the first-start
// bootstrap run while /healthz already answers and /readyz says why it is not ready yet.
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ensureDefaultTenant } from '../control-plane/services/bootstrap.js';
import { buildDataPlaneApp } from '../data-plane/app.js';
import { createReadiness, type Readiness } from '../data-plane/plugins/health.js';
import { GatewayError } from '../shared/errors/index.js';
import { type AuditWriter, createAuditWriter } from '../storage/audit-writer.js';
import { type Database, openDatabase } from '../storage/database.js';
import { migrateDatabase } from '../storage/migrations.js';
import type { GatewayConfig } from './config.js';

export const ADMIN_KEY_FILE = 'admin-api-key';

export interface RunningGateway {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly db: Database;
  readonly audit: AuditWriter;
  readonly readiness: Readiness;
  /** Stops accepting requests, drains, flushes the audit queue, closes the database. */
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  readonly logger: Logger;
  /** Called once with the admin key when the first start creates it. */
  readonly onAdminKeyCreated?: (key: string, file: string) => void;
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
    lockOwner: { command: 'start' },
  });
  logger.info({ storage: db.location }, 'storage opened');
  const readiness = createReadiness();
  let app: FastifyInstance | undefined;
  let audit: AuditWriter | undefined;
  try {
    app = await buildDataPlaneApp({ logger, readiness });
    const url = await listen(app, config);
    await db.advertise({ command: 'start', url });
    logger.info({ url }, 'listening');

    readiness.reason = 'applying migrations';
    const migrated = await migrateDatabase(db);
    logger.info(
      { applied: migrated.applied, alreadyApplied: migrated.alreadyApplied },
      migrated.applied.length > 0 ? 'migrations applied' : 'database schema up to date',
    );

    audit = createAuditWriter(db);
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
    readiness.ready = true;
    readiness.reason = '';
    logger.info({ url }, 'ready');
    const running = { url, app, db, audit, readiness };
    let closing: Promise<void> | undefined;
    return {
      ...running,
      close() {
        closing ??= shutdown(running, logger);
        return closing;
      },
    };
  } catch (error) {
    readiness.ready = false;
    await app?.close().catch(() => {});
    await audit?.close().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  }
}

async function listen(app: FastifyInstance, config: GatewayConfig): Promise<string> {
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
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  // writeFile's mode applies only when it creates the file; enforce it for an existing one too.
  await chmod(file, 0o600);
}

async function shutdown(
  gateway: { app: FastifyInstance; db: Database; audit: AuditWriter; readiness: Readiness },
  logger: Logger,
): Promise<void> {
  gateway.readiness.ready = false;
  gateway.readiness.reason = 'shutting down';
  logger.info('shutting down: draining requests');
  await gateway.app.close();
  await gateway.audit.close();
  logger.info('audit queue flushed');
  await gateway.db.close();
  logger.info('stopped');
}
