// `agent-gateway data-plane`: the data-plane routes in a process of their own, the store fed by
// the configuration stream client instead of the in-process publisher. Ready (/readyz 200) once a
// snapshot serves: the persisted one at start, or the first one the control plane sends.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ConfigStreamClient } from '../data-plane/remote/client.js';
import { SNAPSHOT_FILE } from '../data-plane/remote/persistence.js';
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
}

export async function startDataPlane(
  config: GatewayConfig,
  options: StartDataPlaneOptions,
): Promise<RunningDataPlane> {
  const { logger } = options;
  const snapshotFile = join(config.dataDir, SNAPSHOT_FILE);
  let client: ConfigStreamClient | undefined;
  const running = await startProcess(config, logger, {
    role: 'data-plane',
    initialReadiness: 'waiting for the first configuration snapshot',
    async prepare(runtime) {
      const { store, metrics } = runtime;
      client = new ConfigStreamClient({
        controlPlaneUrl: options.controlPlaneUrl,
        credential: options.credential,
        name: options.name,
        snapshotFile,
        logger,
        apply: (snapshot) => applySnapshot(store, snapshot, metrics, logger),
      });
      await client.loadPersisted();
    },
    async start({ runtime, url, readiness }) {
      logger.info({ url, controlPlane: options.controlPlaneUrl, snapshotFile }, 'configuration');
      const { store } = runtime;
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
  return { ...running, client: client! };
}
