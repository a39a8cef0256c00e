// Runs storage tests against both databases the gateway supports: an in-memory PGlite and, when
// DATABASE_URL is set, a real PostgreSQL server in a schema of the test's own (dropped after).
// Without DATABASE_URL the PostgreSQL variants are skipped with a visible message; under CI a
// missing DATABASE_URL is an error, so the real-server path cannot silently stop being tested.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe } from 'vitest';
import { type Database, openDatabase } from '../../storage/engine/database.js';
import { type EmbeddedServer, startEmbeddedServer } from '../../storage/engine/embedded-server.js';
import { migrateDatabase } from '../../storage/engine/migrations.js';
import { PGLITE_EMPTY_TEMPLATE_VARIABLE, PGLITE_TEMPLATE_VARIABLE } from './pglite-template.js';

export const postgresUrl = process.env.DATABASE_URL || undefined;

if (!postgresUrl) {
  if (process.env.CI === 'true') {
    throw new Error('CI=true but DATABASE_URL is not set: the PostgreSQL tests must run in CI');
  }
  console.warn('DATABASE_URL is not set: PostgreSQL storage tests are SKIPPED (PGlite only).');
}

export type DatabaseKindUnderTest = 'pglite' | 'postgres';

export interface TestDatabase {
  readonly kind: DatabaseKindUnderTest;
  readonly db: Database;
  /** PostgreSQL only: the schema this test owns, for a second connection or process. */
  readonly schema: string | undefined;
  dispose(): Promise<void>;
}

export function uniqueSchemaName(): string {
  return `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** Opens an empty database of the given kind; `migrate` applies prisma/migrations first. */
export async function createTestDatabase(
  kind: DatabaseKindUnderTest,
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  const schema = kind === 'postgres' ? uniqueSchemaName() : undefined;
  if (kind === 'postgres' && !postgresUrl) throw new Error('DATABASE_URL is not set');
  const migrate = options.migrate !== false;
  // A migrated in-memory PGlite is a server an earlier test of this process left (emptied) or one
  // loaded from the migrated template; an empty one is loaded from the empty template
  // (pglite-template.ts).
  const server = kind === 'pglite' && migrate ? await migratedServer() : undefined;
  const db = await openDatabase(
    kind === 'postgres'
      ? { url: postgresUrl, schema }
      : { embeddedServer: server, pgliteTemplate: emptyPGliteTemplate() },
  );
  // Still run on a template: it checks that the template holds every migration, in a few ms.
  if (migrate) await migrateDatabase(db);
  return {
    kind,
    db,
    schema,
    async dispose() {
      await db.close();
      if (schema) await dropSchema(schema);
      if (server && server.failure === null) idleServers.push(server);
    },
  };
}

/**
 * Migrated in-memory servers whose test has ended, in this test process. A test database used to
 * be a new server loaded from the migrated template each time: about a CPU-second, a hundred times
 * a run. Now a server serves one test after another; between two, every table but the migrations'
 * is emptied (and its sequences restarted), the session's state is discarded, and the server is
 * used again only if its schema is still exactly the template's (a test that altered it, or
 * stopped the server, gets it replaced). The next test reaches it through a new connection pool:
 * whatever an ended test left running holds the old pool, which is closed. The idle servers live
 * as long as the test process (the one state a file leaves behind on purpose: vitest.config.ts),
 * at most as many as one file had open at once.
 */
const idleServers: EmbeddedServer[] = [];
let templateShape: string | undefined;

async function migratedServer(): Promise<EmbeddedServer> {
  for (let server = idleServers.pop(); server; server = idleServers.pop()) {
    if (await emptied(server)) return server;
    await server.close();
  }
  const server = await startEmbeddedServer({
    template: process.env[PGLITE_TEMPLATE_VARIABLE],
    maxConnections: 10,
  });
  templateShape ??= await withClient(server, shapeOf);
  return server;
}

/** Empties a used server; false when it cannot be, or its schema is no longer the template's. */
async function emptied(server: EmbeddedServer): Promise<boolean> {
  if (server.failure !== null) return false;
  try {
    return await withClient(server, async (client) => {
      const { rows } = await client.query<{ name: string }>(
        `select format('%I.%I', schemaname, tablename) as name from pg_tables
          where schemaname = 'public' and tablename <> '_prisma_migrations'`,
      );
      const tables = rows.map((row) => row.name).join(', ');
      // As a replica would: the audit trail's append-only triggers refuse a TRUNCATE otherwise.
      await client.query('set session_replication_role = replica');
      try {
        if (tables !== '') await client.query(`truncate ${tables} restart identity cascade`);
      } finally {
        // PGlite is one backend session for every connection: what one test set (this role,
        // settings, advisory locks, prepared statements) would still hold in the next.
        await client.query('discard all');
      }
      return (await shapeOf(client)) === templateShape;
    });
  } catch {
    return false;
  }
}

async function withClient<T>(
  server: EmbeddedServer,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({
    host: server.host,
    port: server.port,
    user: 'postgres',
    database: 'postgres',
    // Failure bounds only: a server that does not answer is replaced, not waited for.
    connectionTimeoutMillis: 30_000,
    query_timeout: 30_000,
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** What a test could change besides rows: schemas, tables, columns, indexes, functions, roles. */
async function shapeOf(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ shape: string }>(`
    select md5(string_agg(item, E'\n' order by item)) as shape from (
      select format('column %s.%s.%s %s %s %s', table_schema, table_name, column_name, data_type,
                    is_nullable, coalesce(column_default, '')) as item
        from information_schema.columns
        where table_schema not in ('pg_catalog', 'information_schema')
      union all select format('index %s %s', schemaname, indexdef) from pg_indexes
        where schemaname not in ('pg_catalog', 'information_schema')
      union all select format('function %s %s', p.oid::regprocedure, md5(p.prosrc))
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname not in ('pg_catalog', 'information_schema')
      union all select format('trigger %s %s', tgrelid::regclass, tgname) from pg_trigger
        where not tgisinternal
      union all select format('schema %s', nspname) from pg_namespace
      union all select format('role %s', rolname) from pg_roles
      union all select format('migration %s %s', migration_name, checksum) from _prisma_migrations
    ) items`);
  return rows[0]?.shape ?? '';
}

/**
 * The suite's dump of an empty PGlite cluster (as initdb leaves it): open it instead of a new
 * cluster where the test is not about initdb (pglite-template.ts).
 */
export function emptyPGliteTemplate(): string | undefined {
  return process.env[PGLITE_EMPTY_TEMPLATE_VARIABLE];
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/** Runs `body` once per database kind available: `describe('pglite')`, `describe('postgres')`. */
export function describeEachDatabase(
  title: string,
  body: (kind: DatabaseKindUnderTest) => void,
): void {
  describe(`${title} [pglite]`, () => body('pglite'));
  (postgresUrl ? describe : describe.skip)(`${title} [postgres]`, () => body('postgres'));
}
