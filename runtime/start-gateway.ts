// `agent-gateway start` (both planes, one process, one port) and `agent-gateway control-plane`:
// after listening, migrations run, the master key is opened and checked against the sealed CA
// keys, the first-start bootstrap runs, then the in-process publisher loads the configuration;
// the process is ready once the first snapshot serves.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ensureDefaultTenant } from '../control-plane/services/bootstrap.js';
import { gatewayError } from '../shared/errors/index.js';
import { migrateDatabase } from '../storage/engine/migrations.js';
import { ADMIN_KEY_FILE } from './admin-key-file.js';
import type { GatewayConfig } from './config.js';
import { openMasterKey } from './master-key.js';
import { markReady, type RunningProcess, startProcess } from './process.js';
import { writeSecretFile } from './secret-file.js';

export type RunningGateway = RunningProcess;

export interface StartGatewayOptions {
  readonly logger: Logger;
  /** Called once with the admin key when the first start creates it. */
  readonly onAdminKeyCreated?: (key: string, file: string) => void;
  /** `all` for `start`, `control-plane` for `agent-gateway control-plane`. */
  readonly role?: 'all' | 'control-plane';
}

export function startGateway(
  config: GatewayConfig,
  options: StartGatewayOptions,
): Promise<RunningGateway> {
  const { logger } = options;
  return startProcess(config, logger, {
    role: options.role ?? 'all',
    // Its name in the audit entries it writes (metadata.writtenBy) and the kills it receives;
    // `start` keeps the default, `local`.
    ...(options.role === 'control-plane' ? { processName: 'control-plane' } : {}),
    initialReadiness: 'starting',
    async start({ runtime, db, url, readiness }) {
      readiness.reason = 'applying migrations';
      const migrated = await migrateDatabase(db);
      logger.info(
        { applied: migrated.applied, alreadyApplied: migrated.alreadyApplied },
        migrated.applied.length > 0 ? 'migrations applied' : 'database schema up to date',
      );
      // Before anything can sign: a master key that cannot open the sealed CA keys stops here.
      readiness.reason = 'opening the master key';
      const masterKey = await openMasterKey(config, db, logger);
      runtime.useMasterKey(masterKey.key, masterKey.source);
      readiness.reason = 'bootstrapping';
      const bootstrap = await ensureDefaultTenant(db, runtime.audit);
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
      // Before the first snapshot, so the JWKS it carries names this process's signing key.
      await runtime.registerTokenSigningKey();
      await runtime.publisher.start();
      runtime.toolRefresher.start();
      runtime.decisionCounts?.start();
      // The operator console is where a new user goes next (README quickstart).
      markReady(readiness, logger, { url, console: `${url}/console` });
    },
  });
}

async function writeKeyFile(file: string, key: string): Promise<void> {
  try {
    // Creates the data directory too: with PostgreSQL nothing else has created it yet.
    await writeSecretFile(file, key);
  } catch (error) {
    throw gatewayError(
      'STORAGE_DATA_DIR_UNWRITABLE',
      { what: 'the admin API key to', path: file, reason: (error as Error).message },
      { cause: error },
    );
  }
}
