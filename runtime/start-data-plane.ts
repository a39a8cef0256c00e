// `agent-gateway data-plane`: the data-plane routes in a process of their own, the store fed by
// the configuration stream client instead of the in-process publisher.
//
// Start-up (docs/config-push.md, "Start-up"): the persisted snapshot is loaded (compiled, so it can
// serve at once) but decides nothing yet. The process connects and waits, at most
// AGENT_GATEWAY_STARTUP_SNAPSHOT_WAIT_MS, for the control plane's current configuration; until
// then /readyz answers 503 and every governed request 503 DATA_PLANE_NOT_READY (the serving gate).
// Only a control plane not reached within that bound lets the persisted snapshot serve, and the
// process says so with its version. Without a persisted snapshot it waits for the first one.
//
// Out of service (/readyz 503) while the control plane refuses the credential (revoked: every
// governed request answers 503 DATA_PLANE_REVOKED) or has been silent for three heartbeats
// (stale: requests are still decided on the last snapshot, the kill guard reading the kill table
// first; docs/config-push.md, "Staleness").
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
import { findDataPlaneName } from '../control-plane/stream/credentials.js';
import { ConfigStreamClient } from '../data-plane/remote/client.js';
import { KillGuard } from '../data-plane/remote/kill-guard.js';
import { SNAPSHOT_FILE } from '../data-plane/remote/persistence.js';
import { followRevocations } from '../data-plane/remote/revocation-follower.js';
import { ServingGate } from '../data-plane/remote/serving-gate.js';
import { registerStreamMetrics } from '../data-plane/remote/stream-metrics.js';
import { type GatewayError, gatewayError } from '../shared/errors/index.js';
import { EVENT_TYPES, type EventBus, followEvents } from '../shared/events/index.js';
import { asAgentId, asTenantId } from '../shared/ids.js';
import type { Database } from '../storage/engine/database.js';
import { readKillDeltasAfter } from '../storage/tables/kill-deltas.js';
import { readCredentialRevocation } from '../storage/tables/revocations.js';
import { type GatewayConfig, MASTER_KEY_VARIABLE } from './config.js';
import { applySnapshot } from './gateway-runtime.js';
import { readMasterKey } from './master-key.js';
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
  readonly servingGate: ServingGate;
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
  let servingGate: ServingGate | undefined;
  let stopKillWatch: (() => Promise<void>) | undefined;
  let stopRevocationWatch: (() => Promise<void>) | undefined;
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
      const masterKey = await readMasterKey(config);
      if (masterKey) {
        runtime.requestStateKey.useMasterKey(masterKey.key);
        logger.info({ source: masterKey.source }, 'master key read (MCP requestState envelopes)');
      } else {
        logger.warn(
          { variable: MASTER_KEY_VARIABLE },
          "no master key: held MCP calls of 2026-07-28 clients get no requestState, and one a client sends is refused; set AGENT_GATEWAY_MASTER_KEY to the control plane's value on every data plane (docs/mcp-proxy.md)",
        );
      }
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
      // First in line: a data plane that must not decide refuses before the kill guard reads.
      const gate = new ServingGate({
        revoked: () => stream.refused,
        store,
        refusals: runtime.refusals,
      });
      servingGate = gate;
      gate.install(runtime.app);
      registerStreamMetrics(metrics.registry, stream);
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
      logger.info(
        {
          url,
          publicUrl: runtime.publicUrl.get(),
          name,
          controlPlane: options.controlPlaneUrl,
          snapshotFile,
          startupSnapshotWaitMs: config.startupSnapshotWaitMs,
        },
        'configuration',
      );
      const { store } = runtime;
      const stream = client!;
      haveDatabase(db);
      readiness.condition = () => describeOutOfService(stream);
      // Kills committed while this process was down, applied before it is ready. Without a
      // persisted snapshot nothing serves yet: the first snapshot and the stream's catch-up
      // bring them.
      if (store.current) {
        await killGuard!.readAfterNow();
        logger.info({ killsThrough: client!.killCursor }, 'kills read from the database');
      }
      const ready = () => {
        if (!store.current) return;
        servingGate!.open();
        markReady(readiness, logger, { url, version: store.current.version });
      };
      // The control plane builds the snapshots this process serves: its JWKS names this key once
      // the row exists (the control plane owns migrations; the table exists once it has run).
      await runtime.registerTokenSigningKey();
      stopKillWatch = watchKills(runtime.events, stream, killGuard!, logger);
      // Revocations made anywhere, refused here at once (the kill's path: the database's bus).
      stopRevocationWatch = followRevocations({
        events: runtime.events,
        revoked: runtime.revokedTokens,
        store,
        readCredential: (tenantId, credentialId) =>
          readCredentialRevocation(db, tenantId, credentialId),
        logger,
        onApplied: (kind) => runtime.metrics.revocationsApplied.inc({ kind }),
      });
      stream.start();
      readiness.reason = "waiting for the control plane's current configuration";
      const outcome = await stream.waitForCurrent(config.startupSnapshotWaitMs);
      if (outcome === 'current') {
        ready();
        // The control plane had no snapshot to send yet: its first one is the current one.
        if (!store.current) store.onApply(ready);
      } else if (outcome === 'unreachable' && store.current) {
        logger.warn(
          {
            version: store.current.version,
            waitedMs: config.startupSnapshotWaitMs,
            controlPlane: options.controlPlaneUrl,
          },
          'control plane not reached in time: serving the persisted snapshot',
        );
        ready();
      } else if (outcome === 'unreachable') {
        // Nothing persisted: the first snapshot the control plane sends is the current one.
        readiness.reason = 'waiting for the first configuration snapshot';
        store.onApply(ready);
      } else {
        // Refused (revoked): nothing serves; should the credential be accepted again, the
        // current configuration arrives first.
        void waitUntilCurrent(stream).then(ready);
      }
    },
    async stopFeeds() {
      await stopKillWatch?.();
      await stopRevocationWatch?.();
      await client?.stop();
    },
  });
  return {
    ...running,
    client: client!,
    killGuard: killGuard!,
    servingGate: servingGate!,
    fatal,
  };
}

/** Why /readyz answers 503 however ready the process is: revoked or stale; else undefined. */
function describeOutOfService(stream: ConfigStreamClient): string | undefined {
  if (stream.refused) return "revoked: the control plane refuses this data plane's credential";
  if (stream.freshness === 'stale') {
    return `stale: no word from the control plane for ${Math.round(stream.silentMs / 1000)} s`;
  }
  return undefined;
}

async function waitUntilCurrent(stream: ConfigStreamClient): Promise<void> {
  while ((await stream.waitForCurrent()) !== 'current') {
    // refused again: keep waiting
  }
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
  const stopListening = followEvents(
    events,
    EVENT_TYPES.AGENT_KILL_COMMITTED,
    (event) => {
      if (event.kill.seq > client.killCursor) void read('announced');
    },
    (error) => logger.error({ err: error }, 'kill announcement watch failed'),
  );
  const timer = setInterval(() => {
    if (client.freshness !== 'live') void read('stream not live');
  }, KILL_POLL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await stopListening();
  };
}
