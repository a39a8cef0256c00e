// Applies prisma/migrations to a database without the Prisma CLI (whose native engine cannot be
// downloaded on our machines), keeping Prisma's own bookkeeping table `_prisma_migrations` with
// the same columns and checksums, so `prisma migrate deploy` and this runner agree on what is
// applied.
//
// Invariants:
// - all pending migrations apply in one transaction: a failure leaves the database as it was;
// - concurrent runners (several gateways starting against one PostgreSQL) are serialized by the
//   advisory lock Prisma itself uses, taken inside that transaction;
// - an applied migration whose file changed, or an applied migration this build does not know,
//   stops the start with a clear error instead of guessing.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gatewayError } from '../../shared/errors/index.js';
import { findPackageRoot } from '../../shared/package-root.js';
import type { Database, SqlExecutor } from './database.js';
import { StorageError } from './errors.js';

/** The key of `pg_advisory_lock` that `prisma migrate` takes; sharing it excludes both. */
const PRISMA_MIGRATE_LOCK_KEY = 72707369;
const MIGRATION_DIR_NAME = /^\d{14}_[a-z0-9_]+$/;

export interface MigrationFile {
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

export interface MigrationResult {
  readonly applied: readonly string[];
  readonly alreadyApplied: number;
}

export function findMigrationsDirectory(): string {
  return join(findPackageRoot(), 'prisma', 'migrations');
}

export async function readMigrations(
  directory = findMigrationsDirectory(),
): Promise<MigrationFile[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory() && MIGRATION_DIR_NAME.test(entry.name))
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(directory, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

const CREATE_BOOKKEEPING = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"            VARCHAR(64) NOT NULL,
  "finished_at"         TIMESTAMPTZ,
  "migration_name"      VARCHAR(255) NOT NULL,
  "logs"                TEXT,
  "rolled_back_at"      TIMESTAMPTZ,
  "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function migrateDatabase(
  db: Database,
  migrations?: readonly MigrationFile[],
): Promise<MigrationResult> {
  const files = migrations ?? (await readMigrations());
  try {
    return await db.transaction(async (tx) => {
      if (db.kind === 'postgres') {
        await tx.query('select pg_advisory_xact_lock($1)', [PRISMA_MIGRATE_LOCK_KEY]);
      }
      await tx.exec(CREATE_BOOKKEEPING);
      const applied = await readApplied(tx);
      const pending = planPending(files, applied);
      for (const migration of pending) {
        await applyOne(tx, migration);
      }
      return { applied: pending.map((m) => m.name), alreadyApplied: files.length - pending.length };
    });
  } catch (error) {
    if (error instanceof StorageError) throw error;
    throw gatewayError(
      'STORAGE_MIGRATION_FAILED',
      { target: db.location, reason: (error as Error).message },
      { cause: error },
    );
  }
}

async function readApplied(tx: SqlExecutor): Promise<Map<string, AppliedRow>> {
  const rows = await tx.query<AppliedRow>(
    'select migration_name, checksum, finished_at, rolled_back_at from "_prisma_migrations"',
  );
  const applied = new Map<string, AppliedRow>();
  for (const row of rows) {
    if (row.finished_at !== null && row.rolled_back_at === null) {
      applied.set(row.migration_name, row);
    } else if (row.rolled_back_at === null) {
      // Started by `prisma migrate deploy` and never finished: a human must look at it.
      throw gatewayError('STORAGE_MIGRATION_FAILED', {
        target: `migration ${row.migration_name}`,
        reason: 'it was started earlier and did not finish',
      });
    }
  }
  return applied;
}

function planPending(
  files: readonly MigrationFile[],
  applied: ReadonlyMap<string, AppliedRow>,
): MigrationFile[] {
  const known = new Set(files.map((file) => file.name));
  const unknown = [...applied.keys()].filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw gatewayError('STORAGE_SCHEMA_AHEAD', { migrations: unknown.join(', ') });
  }
  const pending: MigrationFile[] = [];
  for (const file of files) {
    const row = applied.get(file.name);
    if (!row) {
      pending.push(file);
    } else if (row.checksum !== file.checksum) {
      throw gatewayError('STORAGE_MIGRATION_DRIFT', {
        migration: file.name,
        appliedChecksum: `${row.checksum.slice(0, 12)}…`,
        fileChecksum: `${file.checksum.slice(0, 12)}…`,
      });
    }
  }
  return pending;
}

async function applyOne(tx: SqlExecutor, migration: MigrationFile): Promise<void> {
  try {
    await tx.exec(migration.sql);
  } catch (error) {
    throw gatewayError(
      'STORAGE_MIGRATION_FAILED',
      { target: `migration ${migration.name}`, reason: (error as Error).message },
      { cause: error },
    );
  }
  await tx.query(
    `insert into "_prisma_migrations"
       (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
     values ($1, $2, now(), $3, now(), 1)`,
    [randomUUID(), migration.checksum, migration.name],
  );
}
