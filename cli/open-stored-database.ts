// Opens the gateway's existing database for a command that works on stored data (`audit export`,
// `admin-key reset`), chosen like the gateway's: --data-dir, else DATABASE_URL (PostgreSQL, schema
// AGENT_GATEWAY_DB_SCHEMA; works while gateways run), else the embedded database in
// AGENT_GATEWAY_DATA_DIR (default ./data), which a running gateway holds exclusively: then the
// command says who holds it (STORAGE_DATA_DIR_IN_USE) and never opens it. It never creates a
// database and never migrates one: a command on a wrong path or an old schema fails clearly.
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadConfig } from '../runtime/config.js';
import { gatewayError } from '../shared/errors/index.js';
import { isProcessAlive, readDataDirLock } from '../storage/engine/data-dir-lock.js';
import { type Database, openDatabase } from '../storage/engine/database.js';
import { readMigrations } from '../storage/engine/migrations.js';

export interface StoredDatabase {
  readonly db: Database;
  /** The PostgreSQL connection of DATABASE_URL, for the event bus; absent on the embedded one. */
  readonly postgres?: { readonly url: string; readonly schema: string | undefined };
}

/** Opens and checks the database; `command` is recorded in the data dir's lock while it runs. */
export async function openStoredDatabase(
  dataDirFlag: string | undefined,
  command: string,
): Promise<StoredDatabase> {
  const config = loadConfig();
  let stored: StoredDatabase;
  if (dataDirFlag === undefined && config.databaseUrl) {
    stored = {
      db: await openDatabase({
        url: config.databaseUrl,
        schema: config.databaseSchema,
        maxConnections: 2,
      }),
      postgres: { url: config.databaseUrl, schema: config.databaseSchema },
    };
  } else {
    stored = { db: await openDataDir(dataDirFlag ?? config.dataDir, command) };
  }
  try {
    await requireMigrated(stored.db);
  } catch (error) {
    await stored.db.close().catch(() => {});
    throw error;
  }
  return stored;
}

async function openDataDir(dir: string, command: string): Promise<Database> {
  const dataDir = resolve(dir);
  // Never create a database here: a directory without one is a wrong path.
  if (!(await isDirectory(join(dataDir, 'pgdata')))) {
    throw gatewayError('STORAGE_DATA_DIR_MISSING', { dataDir });
  }
  // Checked before opening so a running gateway's directory is never touched; openDatabase
  // checks again under the lock, for a gateway that starts in between.
  const holder = await readDataDirLock(dataDir);
  if (holder && holder.pid !== process.pid && isProcessAlive(holder.pid)) {
    const serving = typeof holder.url === 'string' ? ` serving ${holder.url}` : '';
    // The hint says what to do: stop that gateway, or share a PostgreSQL database instead.
    // details.url lets a command name the HTTP route that does its work on that gateway.
    throw gatewayError(
      'STORAGE_DATA_DIR_IN_USE',
      { dataDir, holder: `process ${holder.pid}${serving}` },
      { details: { dataDir, ...(typeof holder.url === 'string' ? { url: holder.url } : {}) } },
    );
  }
  return openDatabase({ dataDir, lockOwner: { command } });
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Fails with STORAGE_NOT_MIGRATED when a migration of this build is not applied. */
async function requireMigrated(db: Database): Promise<void> {
  const [bookkeeping] = await db.query<{ table: string | null }>(
    `select to_regclass('_prisma_migrations')::text as "table"`,
  );
  const applied = new Set<string>();
  if (bookkeeping?.table) {
    const rows = await db.query<{ migration_name: string }>(
      `select migration_name from "_prisma_migrations"
       where finished_at is not null and rolled_back_at is null`,
    );
    for (const row of rows) applied.add(row.migration_name);
  }
  const pending = (await readMigrations()).filter((m) => !applied.has(m.name)).map((m) => m.name);
  if (pending.length > 0) {
    const missing =
      applied.size === 0
        ? 'every migration (it has never been migrated)'
        : `${pending.length} migration(s): ${pending.join(', ')}`;
    throw gatewayError('STORAGE_NOT_MIGRATED', { location: db.location, missing });
  }
}
