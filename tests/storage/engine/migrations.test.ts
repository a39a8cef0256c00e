import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../storage/engine/database.js';
import { StorageError } from '../../../storage/engine/errors.js';
import {
  type MigrationFile,
  migrateDatabase,
  readMigrations,
} from '../../../storage/engine/migrations.js';
import { openSchemaDiffer } from '../../../storage/engine/schema-engine.js';
import {
  createTestDatabase,
  describeEachDatabase,
  emptyPGliteTemplate,
  postgresUrl,
  type TestDatabase,
} from '../../support/databases.js';

const tableNames = async (t: TestDatabase) =>
  (
    await t.db.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = $1 order by 1`,
      [t.db.schema],
    )
  ).map((row) => row.table_name);

describe('the migrations', () => {
  it('are named as prisma migrate expects and each has a checksum', async () => {
    const migrations = await readMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    for (const migration of migrations) {
      expect(migration.name).toMatch(/^\d{14}_[a-z0-9_]+$/);
      expect(migration.checksum).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('produce exactly the database prisma/schema.prisma describes (PGlite)', async () => {
    // An empty cluster, from the suite's dump of one (initdb is not what is tested here).
    const client = await PGlite.create({
      loadDataDir: new Blob([await readFile(emptyPGliteTemplate() as string)]),
    });
    const db = await openDatabase({ pglite: client });
    try {
      await migrateDatabase(db);
      const differ = await openSchemaDiffer({ kind: 'pglite', client });
      const drift = await differ.diffDatabaseToSchema();
      differ.close();
      expect(drift.trim()).toMatch(/^(-- This is an empty migration\.)?$/);
    } finally {
      await db.close();
    }
  }, 60_000);

  (postgresUrl ? it : it.skip)(
    'produce exactly the database prisma/schema.prisma describes (PostgreSQL)',
    async () => {
      const t = await createTestDatabase('postgres');
      try {
        const differ = await openSchemaDiffer({
          kind: 'postgres',
          url: postgresUrl as string,
          schema: t.db.schema,
        });
        const drift = await differ.diffDatabaseToSchema();
        differ.close();
        expect(drift.trim()).toMatch(/^(-- This is an empty migration\.)?$/);
      } finally {
        await t.dispose();
      }
    },
    60_000,
  );
});

describeEachDatabase('migrateDatabase', (kind) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('applies every migration once and is idempotent', async () => {
    t = await createTestDatabase(kind, { migrate: false });
    const first = await migrateDatabase(t.db);
    expect(first.applied).toEqual((await readMigrations()).map((m) => m.name));
    const second = await migrateDatabase(t.db);
    expect(second).toEqual({ applied: [], alreadyApplied: first.applied.length });
    const rows = await t.db.query<{ n: number }>(
      'select count(*)::int as n from "_prisma_migrations"',
    );
    expect(rows[0]?.n).toBe(first.applied.length);
  });

  it('leaves nothing behind when a migration fails', async () => {
    t = await createTestDatabase(kind, { migrate: false });
    const good = await readMigrations();
    const broken: MigrationFile = {
      name: '29991231000000_broken',
      sql: 'CREATE TABLE "half_written" (id int); SELECT no_such_function();',
      checksum: '0'.repeat(64),
    };
    const error = await migrateDatabase(t.db, [...good, broken]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('STORAGE_MIGRATION_FAILED');
    expect((error as StorageError).message).toContain('29991231000000_broken');
    const tables = await tableNames(t);
    expect(tables).not.toContain('half_written');
    expect(tables).not.toContain('tenants');
  });

  it('refuses an applied migration whose file changed', async () => {
    t = await createTestDatabase(kind);
    const [first, ...rest] = await readMigrations();
    const edited = { ...(first as MigrationFile), checksum: 'f'.repeat(64) };
    const error = await migrateDatabase(t.db, [edited, ...rest]).catch((e: unknown) => e);
    expect((error as StorageError).code).toBe('STORAGE_MIGRATION_DRIFT');
  });

  it('refuses a database migrated by a newer gateway', async () => {
    t = await createTestDatabase(kind);
    const error = await migrateDatabase(t.db, []).catch((e: unknown) => e);
    expect((error as StorageError).code).toBe('STORAGE_SCHEMA_AHEAD');
  });

  it('makes audit rows append-only: UPDATE, DELETE and TRUNCATE fail', async () => {
    t = await createTestDatabase(kind);
    await t.db.query(`insert into tenants (id, name, "updatedAt") values ('t1', 'one', now())`);
    await t.db.query(
      `insert into audit_entries (id, "tenantId", seq, action, "resourceType", "resourceId",
         metadata, after, "createdAt", hash, "prevHash")
       values ('a1', 't1', 1, 'x', 'y', 'z', '{}', 's', now(), 'h1', 'h0')`,
    );
    await expect(t.db.query(`update audit_entries set action = 'forged'`)).rejects.toThrow(
      /append-only: UPDATE/,
    );
    await expect(t.db.query('delete from audit_entries')).rejects.toThrow(/append-only: DELETE/);
    await expect(t.db.query('truncate audit_entries')).rejects.toThrow(/append-only: TRUNCATE/);
    const rows = await t.db.query<{ action: string }>('select action from audit_entries');
    expect(rows).toEqual([{ action: 'x' }]);
  });
});

(postgresUrl ? describe : describe.skip)('concurrent start against one PostgreSQL', () => {
  it('lets exactly one of several migrating processes apply the migrations', async () => {
    const t = await createTestDatabase('postgres', { migrate: false });
    const others = await Promise.all(
      [1, 2, 3].map(() => openDatabase({ url: postgresUrl, schema: t.schema })),
    );
    try {
      const results = await Promise.all([t.db, ...others].map((db) => migrateDatabase(db)));
      const appliers = results.filter((r) => r.applied.length > 0);
      expect(appliers).toHaveLength(1);
      const rows = await t.db.query<{ n: number }>(
        'select count(*)::int as n from "_prisma_migrations"',
      );
      expect(rows[0]?.n).toBe((await readMigrations()).length);
    } finally {
      await Promise.all(others.map((db) => db.close()));
      await t.dispose();
    }
  });
});
