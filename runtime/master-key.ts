// The master key that seals the tenant CA keys (DESIGN.md §6, §6a): AGENT_GATEWAY_MASTER_KEY when
// set, else `<dataDir>/master-key`, made (32 random bytes, base64url, mode 0600) on the first
// start that needs it. Only processes that sign open it: `start` and `control-plane`. A data plane
// unseals nothing; it reads the key when one is configured (readMasterKey: never made) only to
// derive the MAC key of the MCP proxy's requestState envelopes, which every data plane of a
// deployment must share (data-plane/mcp-proxy/request-state-key.ts).
//
// `control-plane` without the variable uses the data-directory file too. That is consistent with
// §6a (one master key, the same on every process that unseals): the control plane is the only
// process that unseals, and a second control plane whose own file holds another key fails its
// start with MASTER_KEY_MISMATCH as soon as a CA key exists, instead of signing with keys nobody
// else can open. Several control planes therefore need the variable, set to one value.
//
// Before the process is ready, the key must open every CA key still in use; otherwise the start
// fails with MASTER_KEY_MISMATCH naming the key and where the master key came from.
import { randomBytes } from 'node:crypto';
import { link, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { checkSealedAuditKey } from '../control-plane/audit/signing-key.js';
import { checkSealedCaKeys } from '../control-plane/services/agentiam/signing-keys.js';
import { parseMasterKey } from '../shared/crypto/seal.js';
import { gatewayError } from '../shared/errors/index.js';
import type { Database } from '../storage/engine/database.js';
import { type GatewayConfig, MASTER_KEY_VARIABLE } from './config.js';
import { writeSecretFile } from './secret-file.js';

export const MASTER_KEY_FILE = 'master-key';

export interface MasterKey {
  readonly key: Buffer;
  /** The variable's name or the file's path, for messages. */
  readonly source: string;
  /** Whether this call made the key file. */
  readonly created: boolean;
}

/** The configured master key, or the data directory's key file (made when missing). */
export async function loadMasterKey(
  config: Pick<GatewayConfig, 'masterKey' | 'dataDir'>,
): Promise<MasterKey> {
  if (config.masterKey !== undefined) {
    return { key: config.masterKey, source: MASTER_KEY_VARIABLE, created: false };
  }
  const file = join(config.dataDir, MASTER_KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing !== undefined)
    return { key: parseMasterKey(existing, file), source: file, created: false };
  const created = await createKeyFile(file, randomBytes(32).toString('base64url'));
  return { key: parseMasterKey(created.text, file), source: file, created: created.created };
}

/** The configured master key, or the data directory's key file when there is one; never made. */
export async function readMasterKey(
  config: Pick<GatewayConfig, 'masterKey' | 'dataDir'>,
): Promise<MasterKey | undefined> {
  if (config.masterKey !== undefined) {
    return { key: config.masterKey, source: MASTER_KEY_VARIABLE, created: false };
  }
  const file = join(config.dataDir, MASTER_KEY_FILE);
  const existing = await readKeyFile(file);
  return existing === undefined
    ? undefined
    : { key: parseMasterKey(existing, file), source: file, created: false };
}

/**
 * Loads the master key and checks it against the sealed CA keys and the active audit signing key
 * in the (migrated) database:
 * MASTER_KEY_MISMATCH when it cannot open one of them.
 */
export async function openMasterKey(
  config: Pick<GatewayConfig, 'masterKey' | 'dataDir'>,
  db: Database,
  logger: Logger,
): Promise<MasterKey> {
  const masterKey = await loadMasterKey(config);
  if (masterKey.created) {
    logger.info(
      { file: masterKey.source },
      'first start: created the master key file that seals the tenant CA keys (back it up)',
    );
  }
  const ca = await checkSealedCaKeys(db, masterKey.key, masterKey.source);
  const audit = await checkSealedAuditKey(db, masterKey.key, masterKey.source);
  logger.info(
    { source: masterKey.source, sealedKeys: ca.checked + audit.checked },
    'master key opened',
  );
  return masterKey;
}

async function readKeyFile(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unwritable(file, error);
  }
}

/**
 * Writes the key to a private temporary file, then links it to its name: the name appears
 * complete or not at all, and when two processes race (two `start`s on one PostgreSQL and one
 * data directory), the one that loses reads the winner's key instead of overwriting it.
 */
async function createKeyFile(
  file: string,
  text: string,
): Promise<{ text: string; created: boolean }> {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeSecretFile(temporary, text);
    await link(temporary, file);
    return { text, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw unwritable(file, error);
    return { text: (await readKeyFile(file)) ?? '', created: false };
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

function unwritable(file: string, error: unknown) {
  return gatewayError(
    'STORAGE_DATA_DIR_UNWRITABLE',
    { what: 'the master key to', path: file, reason: (error as Error).message },
    { cause: error },
  );
}
