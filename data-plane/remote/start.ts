// Starts a data plane in a process of its own (`agent-gateway data-plane`): the data-plane routes
// of the gateway runtime, the store fed by the configuration stream client instead of the
// in-process publisher. Ready (/readyz 200) once a snapshot serves: the persisted one at start, or
// the first one the control plane sends.
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../cli/config.js';
import {
  buildGatewayRuntime,
  type GatewayRuntime,
  listen,
  openEventBus,
} from '../../cli/gateway.js';
import type { EventBus } from '../../control-plane/events/index.js';
import { openDatabase } from '../../storage/database.js';
import { createReadiness } from '../plugins/health.js';
import { ConfigStreamClient } from './client.js';
import { SNAPSHOT_FILE } from './persistence.js';

export interface StartDataPlaneOptions {
  readonly logger: Logger;
  readonly controlPlaneUrl: string;
  readonly credential: string;
  readonly name?: string | undefined;
}

export interface RunningDataPlane {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly runtime: GatewayRuntime;
  readonly client: ConfigStreamClient;
  close(): Promise<void>;
}

export async function startDataPlane(
  config: GatewayConfig,
  options: StartDataPlaneOptions,
): Promise<RunningDataPlane> {
  const { logger } = options;
  const db = await openDatabase({ url: config.databaseUrl, schema: config.databaseSchema });
  logger.info({ storage: db.location }, 'storage opened');
  const readiness = createReadiness();
  readiness.reason = 'waiting for the first configuration snapshot';
  let runtime: GatewayRuntime | undefined;
  let events: EventBus | undefined;
  try {
    // The approvals and audit entries this data plane writes reach the control plane's
    // subscribers through PostgreSQL LISTEN/NOTIFY (remote data planes always use PostgreSQL).
    events = await openEventBus(config, logger);
    runtime = await buildGatewayRuntime({
      events,
      db,
      logger,
      readiness,
      requireMcpOAuth: config.requireMcpOAuth,
      role: 'data-plane',
    });
    const { store, metrics } = runtime;
    const snapshotFile = join(config.dataDir, SNAPSHOT_FILE);
    const client = new ConfigStreamClient({
      controlPlaneUrl: options.controlPlaneUrl,
      credential: options.credential,
      name: options.name,
      snapshotFile,
      logger,
      apply(snapshot) {
        const result = store.apply(snapshot);
        metrics.snapshotApplied.inc({ result: result.applied ? 'applied' : 'rejected' });
        return result;
      },
    });
    await client.loadPersisted();
    const url = await listen(runtime.app, config);
    logger.info({ url, controlPlane: options.controlPlaneUrl, snapshotFile }, 'listening');
    const markReady = () => {
      if (readiness.ready) return;
      readiness.ready = true;
      readiness.reason = '';
      logger.info({ url, version: store.current?.version }, 'ready');
    };
    if (store.current) markReady();
    else store.onApply(markReady);
    client.start();
    const started = runtime;
    let closing: Promise<void> | undefined;
    return {
      url,
      app: started.app,
      runtime: started,
      client,
      close() {
        closing ??= (async () => {
          readiness.ready = false;
          readiness.reason = 'shutting down';
          logger.info('shutting down: draining requests');
          await client.stop();
          await started.app.close();
          await started.stop();
          logger.info('audit queue flushed');
          await db.close();
          logger.info('stopped');
        })();
        return closing;
      },
    };
  } catch (error) {
    await runtime?.app.close().catch(() => {});
    await runtime?.stop().catch(() => {});
    if (!runtime) await events?.close().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  }
}
