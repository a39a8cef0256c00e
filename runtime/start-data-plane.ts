// `agent-gateway data-plane`: the data-plane routes in a process of their own, the store fed by
// the configuration stream client instead of the in-process publisher. Ready (/readyz 200) once a
// snapshot serves: the persisted one at start, or the first one the control plane sends.
//
// Kills: the stream's kill deltas go to the runtime's kill applier. Before the process listens,
// the kills committed after the persisted snapshot's killsThrough are read from PostgreSQL and
// applied (the process may have been down when they were sent), and the kill guard is installed
// in front of every route: while the stream is not live, a request waits for a fresh read of the
// kill table (data-plane/remote/kill-guard.ts).
//
// Kills without the control plane (docs/kill-switch.md, "With the control plane down"): a kill
// another data plane committed is announced on the PostgreSQL event bus (AGENT_KILL_COMMITTED);
// this process reads the kill table at once when the announced kill is past its cursor, and polls
// the table every KILL_POLL_MS while its stream is not live (a notification can be lost while the
// bus reconnects). Whatever it applies from the table it confirms on the bus
// (AGENT_KILL_CONFIRMED), so the receiver's answer names it.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ConfigStreamClient } from '../data-plane/remote/client.js';
import { KillGuard } from '../data-plane/remote/kill-guard.js';
import { SNAPSHOT_FILE } from '../data-plane/remote/persistence.js';
import { EVENT_TYPES, type EventBus } from '../shared/events/index.js';
import { asAgentId, asTenantId } from '../shared/ids.js';
import type { Database } from '../storage/database.js';
import { readKillDeltasAfter } from '../storage/kill-deltas.js';
import type { GatewayConfig } from './config.js';
import { applySnapshot } from './gateway-runtime.js';
import { markReady, type RunningProcess, startProcess } from './process.js';

/** How often the kill table is read while the stream is not live. */
export const KILL_POLL_MS = 300;

export interface StartDataPlaneOptions {
  readonly logger: Logger;
  readonly controlPlaneUrl: string;
  readonly credential: string;
  readonly name?: string | undefined;
}

export interface RunningDataPlane extends RunningProcess {
  readonly client: ConfigStreamClient;
  readonly killGuard: KillGuard;
}

export async function startDataPlane(
  config: GatewayConfig,
  options: StartDataPlaneOptions,
): Promise<RunningDataPlane> {
  const { logger } = options;
  const snapshotFile = join(config.dataDir, SNAPSHOT_FILE);
  let client: ConfigStreamClient | undefined;
  let killGuard: KillGuard | undefined;
  let stopKillWatch: (() => Promise<void>) | undefined;
  // The database is the skeleton's; it reaches this plan when the process listens. A request
  // guarded before then waits for it.
  let haveDatabase!: (db: Database) => void;
  const database = new Promise<Database>((resolve) => {
    haveDatabase = resolve;
  });
  const running = await startProcess(config, logger, {
    role: 'data-plane',
    processName: options.name,
    initialReadiness: 'waiting for the first configuration snapshot',
    async prepare(runtime) {
      const { store, metrics, killApplier } = runtime;
      const stream = new ConfigStreamClient({
        controlPlaneUrl: options.controlPlaneUrl,
        credential: options.credential,
        name: options.name,
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
        applyKills: (deltas) => {
          const name = options.name ?? 'data-plane';
          for (const delta of deltas) {
            const aborted = stream.applyKills([delta]);
            runtime.events.publish({
              type: EVENT_TYPES.AGENT_KILL_CONFIRMED,
              tenantId: asTenantId(delta.tenantId),
              kill: { id: delta.killId, seq: delta.seq, agentId: asAgentId(delta.agentId) },
              confirmation: { by: name, aborted },
            });
          }
        },
        logger,
      });
      runtime.killSwitch.setControlPlaneLive(() => stream.freshness === 'live');
      killGuard = guard;
      // Until the stream is live, every request waits for a read of the kill table.
      guard.install(runtime.app);
    },
    async start({ runtime, db, url, readiness }) {
      logger.info({ url, controlPlane: options.controlPlaneUrl, snapshotFile }, 'configuration');
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
      stopKillWatch = watchKills(runtime.events, client!, killGuard!, logger);
      client!.start();
    },
    async stopFeeds() {
      await stopKillWatch?.();
      await client?.stop();
    },
  });
  return { ...running, client: client!, killGuard: killGuard! };
}

/**
 * Reads the kill table when the bus announces a kill past the cursor, and every KILL_POLL_MS while
 * the stream is not live; returns the function that stops both.
 */
function watchKills(
  events: Pick<EventBus, 'subscribe'>,
  client: ConfigStreamClient,
  guard: KillGuard,
  logger: Logger,
): () => Promise<void> {
  const read = (why: string) =>
    guard.readAfterNow().catch((error: unknown) => {
      logger.warn({ err: error, why }, 'kill table read failed');
    });
  const announced = events.subscribe((event) => event.type === EVENT_TYPES.AGENT_KILL_COMMITTED);
  const listening = (async () => {
    for await (const event of announced) {
      if (event.type === EVENT_TYPES.AGENT_KILL_COMMITTED && event.kill.seq > client.killCursor) {
        void read('announced');
      }
    }
  })();
  const timer = setInterval(() => {
    if (client.freshness !== 'live') void read('stream not live');
  }, KILL_POLL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await announced.return?.();
    await listening.catch(() => {});
  };
}
