// `agent-gateway data-plane`: the data-plane routes in a process of their own, the store fed by
// the configuration stream client instead of the in-process publisher. Ready (/readyz 200) once a
// snapshot serves: the persisted one at start, or the first one the control plane sends.
//
// Kills: the stream's kill deltas go to the runtime's kill applier. Before the process listens,
// the kills committed after the persisted snapshot's killsThrough are read from PostgreSQL and
// applied (the process may have been down when they were sent), and the kill guard is installed
// in front of every route: while the stream is not live, a request waits for a fresh read of the
// kill table (data-plane/remote/kill-guard.ts).
import { join } from 'node:path';
import type { Logger } from 'pino';
import { findDataPlaneName } from '../control-plane/stream/credentials.js';
import { ConfigStreamClient } from '../data-plane/remote/client.js';
import { KillGuard } from '../data-plane/remote/kill-guard.js';
import { SNAPSHOT_FILE } from '../data-plane/remote/persistence.js';
import { type GatewayError, gatewayError } from '../shared/errors/index.js';
import type { Database } from '../storage/database.js';
import { readKillDeltasAfter } from '../storage/kill-deltas.js';
import type { GatewayConfig } from './config.js';
import { applySnapshot } from './gateway-runtime.js';
import { markReady, type RunningProcess, startProcess } from './process.js';

export interface StartDataPlaneOptions {
  readonly logger: Logger;
  readonly controlPlaneUrl: string;
  readonly credential: string;
  readonly name?: string | undefined;
}

export interface RunningDataPlane extends RunningProcess {
  readonly client: ConfigStreamClient;
  readonly killGuard: KillGuard;
  /**
   * Settles when the data plane must stop serving for good (its control plane has another public
   * URL): the CLI prints the error, closes the process and exits 1. Never rejects.
   */
  readonly fatal: Promise<GatewayError>;
}

export async function startDataPlane(
  config: GatewayConfig,
  options: StartDataPlaneOptions,
): Promise<RunningDataPlane> {
  const { logger } = options;
  const snapshotFile = join(config.dataDir, SNAPSHOT_FILE);
  let client: ConfigStreamClient | undefined;
  let onFatal!: (error: GatewayError) => void;
  const fatal = new Promise<GatewayError>((resolve) => {
    onFatal = resolve;
  });
  let name = options.name;
  let killGuard: KillGuard | undefined;
  // The database is the skeleton's; it reaches this plan when the process listens. A request
  // guarded before then waits for it.
  let haveDatabase!: (db: Database) => void;
  const database = new Promise<Database>((resolve) => {
    haveDatabase = resolve;
  });
  const running = await startProcess(config, logger, {
    role: 'data-plane',
    processName: options.name,
    // The registered name is this process's name in kills and audit entries; a --name that is
    // not the credential's stops the start here rather than being refused on every connection.
    async resolveProcessName(db) {
      let registered: string | undefined;
      try {
        registered = await findDataPlaneName(db, options.credential);
      } catch (error) {
        logger.warn({ err: error }, 'cannot read the registered data-plane name; using --name');
        return options.name;
      }
      if (registered !== undefined && options.name !== undefined && registered !== options.name) {
        throw gatewayError('DATA_PLANE_NAME_MISMATCH', {
          given: JSON.stringify(options.name),
          registered: JSON.stringify(registered),
        });
      }
      name = registered ?? options.name;
      return name;
    },
    initialReadiness: 'waiting for the first configuration snapshot',
    async prepare(runtime) {
      const { store, metrics, killApplier } = runtime;
      const stream = new ConfigStreamClient({
        controlPlaneUrl: options.controlPlaneUrl,
        credential: options.credential,
        name: options.name,
        publicUrl: config.publicUrl,
        onFatal,
        snapshotFile,
        logger,
        heartbeatMs: config.streamHeartbeatMs,
        apply: (snapshot) => applySnapshot(store, snapshot, metrics, logger),
        applyKill: (delta) => killApplier.apply(delta),
        // Reported to the control plane after each heartbeat (decisionStats).
        decisions: metrics.decisions,
      });
      client = stream;
      await stream.loadPersisted();
      const guard = new KillGuard({
        freshness: () => stream.freshness,
        cursor: () => stream.killCursor,
        readKills: async (after) => readKillDeltasAfter(await database, after),
        applyKills: (deltas) => stream.applyKills(deltas),
        logger,
      });
      killGuard = guard;
      // Until the stream is live, every request waits for a read of the kill table.
      guard.install(runtime.app);
    },
    async start({ runtime, db, url, readiness }) {
      logger.info(
        {
          url,
          publicUrl: runtime.publicUrl.get(),
          name,
          controlPlane: options.controlPlaneUrl,
          snapshotFile,
        },
        'configuration',
      );
      const { store } = runtime;
      haveDatabase(db);
      // Kills committed while this process was down, applied before it is ready. Without a
      // persisted snapshot nothing serves yet: the first snapshot and the stream's catch-up
      // bring them.
      if (store.current) {
        await killGuard!.readAfterNow();
        logger.info({ killsThrough: client!.killCursor }, 'kills read from the database');
      }
      const ready = () => markReady(readiness, logger, { url, version: store.current?.version });
      if (store.current) ready();
      else store.onApply(ready);
      // The control plane builds the snapshots this process serves: its JWKS names this key once
      // the row exists (the control plane owns migrations; the table exists once it has run).
      await runtime.registerTokenSigningKey();
      client!.start();
    },
    async stopFeeds() {
      await client?.stop();
    },
  });
  return { ...running, client: client!, killGuard: killGuard!, fatal };
}
