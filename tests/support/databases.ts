// Runs storage tests against both databases the gateway supports: an in-memory PGlite and, when
// DATABASE_URL is set, a real PostgreSQL server in a schema of the test's own (emptied for the
// next test or dropped after; the run's global teardown drops what is left).
// Without DATABASE_URL the PostgreSQL variants are skipped with a visible message; under CI a
// missing DATABASE_URL is an error, so the real-server path cannot silently stop being tested.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe } from 'vitest';
import { type Database, openDatabase } from '../../storage/engine/database.js';
import { type EmbeddedServer, startEmbeddedServer } from '../../storage/engine/embedded-server.js';
import { migrateDatabase } from '../../storage/engine/migrations.js';
import { PGLITE_EMPTY_TEMPLATE_VARIABLE, PGLITE_TEMPLATE_VARIABLE } from './pglite-template.js';
import { runSchemaPrefix } from './run-schemas.js';

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
  return `${runSchemaPrefix()}${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** Opens an empty database of the given kind; `migrate` applies prisma/migrations first. */
export async function createTestDatabase(
  kind: DatabaseKindUnderTest,
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  if (kind === 'postgres' && !postgresUrl) throw new Error('DATABASE_URL is not set');
  const migrate = options.migrate !== false;
  // A migrated schema is one an earlier test of this process left (emptied), or a new one.
  const reused = kind === 'postgres' && migrate ? await migratedSchema() : undefined;
  const schema = kind === 'postgres' ? (reused ?? uniqueSchemaName()) : undefined;
  // A migrated in-memory PGlite is a server an earlier test of this process left (emptied) or one
  // loaded from the migrated template; an empty one is loaded from the empty template
  // (pglite-template.ts).
  const server = kind === 'pglite' && migrate ? await migratedServer() : undefined;
  const db = await openDatabase(
    kind === 'postgres'
      ? { url: postgresUrl, schema }
      : { embeddedServer: server, pgliteTemplate: emptyPGliteTemplate() },
  );
  // Still run on a template or a used schema: it checks that every migration is there, in a few ms.
  if (migrate) await migrateDatabase(db);
  if (schema !== undefined && migrate && reused === undefined) {
    schemaShape ??= await withSchemaClient(schema, (client) => schemaShapeOf(client, schema));
  }
  // Taken once migrated: outside the suite (a benchmark) there is no migrated template to start from.
  if (server !== undefined) templateShape ??= await withClient(server, shapeOf);
  return {
    kind,
    db,
    schema,
    async dispose() {
      await db.close();
      if (schema !== undefined) {
        if (migrate) idleSchemas.push(schema);
        else await dropSchema(schema);
      }
      if (server && server.failure === null) idleServers.push(server);
    },
  };
}

/**
 * Migrated PostgreSQL schemas whose test has ended, in this test process: as with the PGlite
 * servers below, a schema serves one test after another instead of a new schema migrated (twelve
 * migrations, about 0.15 CPU-s of the server's) and dropped for each. Between two tests every table
 * but the migrations' is emptied and its sequences restarted; the schema is used again only if its
 * tables, columns, indexes, functions, triggers and migrations are still exactly those of a schema
 * this process migrated (else it is dropped). The next test opens its own connection pool on it.
 */
const idleSchemas: string[] = [];
let schemaShape: string | undefined;

async function migratedSchema(): Promise<string | undefined> {
  for (let schema = idleSchemas.pop(); schema; schema = idleSchemas.pop()) {
    if (await emptiedSchema(schema)) return schema;
    await dropSchema(schema);
  }
  return undefined;
}

/** Empties a used schema; false when it cannot be, or its shape is no longer the migrated one. */
async function emptiedSchema(schema: string): Promise<boolean> {
  if (schemaShape === undefined) return false;
  try {
    return await withSchemaClient(schema, async (client) => {
      await emptyTables(client, schema);
      return (await schemaShapeOf(client, schema)) === schemaShape;
    });
  } catch {
    return false;
  }
}

/** Empties every table of `schema` but the migrations' and restarts their sequences. */
async function emptyTables(client: pg.Client, schema: string): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `select format('%I.%I', schemaname, tablename) as name from pg_tables
      where schemaname = $1 and tablename <> '_prisma_migrations'`,
    [schema],
  );
  const tables = rows.map((row) => row.name).join(', ');
  // As a replica would: the audit trail's append-only triggers refuse a TRUNCATE otherwise.
  await client.query('set session_replication_role = replica');
  if (tables !== '') await client.query(`truncate ${tables} restart identity cascade`);
}

/** A client of its own whose search path is `schema` (so definitions print without it). */
function withSchemaClient<T>(schema: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  return withPgClient({ connectionString: postgresUrl, options: `-c search_path=${schema}` }, fn);
}

/** What a test could change in its schema besides rows, without the schema's own name. */
async function schemaShapeOf(client: pg.Client, schema: string): Promise<string> {
  const { rows } = await client.query<{ shape: string }>(
    `select md5(string_agg(replace(item, $1 || '.', ''), E'\n' order by item)) as shape from (
      select format('column %s.%s %s %s %s', table_name, column_name, data_type, is_nullable,
                    coalesce(column_default, '')) as item
        from information_schema.columns where table_schema = $1
      union all select format('index %s', indexdef) from pg_indexes where schemaname = $1
      union all select format('function %s(%s) %s', p.proname,
                              pg_get_function_identity_arguments(p.oid), md5(p.prosrc))
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = $1
      union all select format('trigger %s %s', c.relname, t.tgname)
        from pg_trigger t join pg_class c on c.oid = t.tgrelid
          join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = $1 and not t.tgisinternal
      union all select format('migration %s %s', migration_name, checksum) from _prisma_migrations
    ) items`,
    [schema],
  );
  return rows[0]?.shape ?? '';
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
  return startEmbeddedServer({
    template: process.env[PGLITE_TEMPLATE_VARIABLE],
    maxConnections: 10,
  });
}

/** Empties a used server; false when it cannot be, or its schema is no longer the template's. */
async function emptied(server: EmbeddedServer): Promise<boolean> {
  if (server.failure !== null) return false;
  try {
    return await withClient(server, async (client) => {
      try {
        await emptyTables(client, 'public');
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

function withClient<T>(server: EmbeddedServer, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  return withPgClient(
    {
      host: server.host,
      port: server.port,
      user: 'postgres',
      database: 'postgres',
      // Failure bounds only: a server that does not answer is replaced, not waited for.
      connectionTimeoutMillis: 30_000,
      query_timeout: 30_000,
    },
    fn,
  );
}

/** Runs `fn` with a client connected by `config`, ended after. */
async function withPgClient<T>(
  config: pg.ClientConfig,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client(config);
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
  await withPgClient({ connectionString: postgresUrl }, (client) =>
    client.query(`drop schema if exists "${schema}" cascade`),
  );
}

/** Runs `body` once per database kind available: `describe('pglite')`, `describe('postgres')`. */
export function describeEachDatabase(
  title: string,
  body: (kind: DatabaseKindUnderTest) => void,
): void {
  describe(`${title} [pglite]`, () => body('pglite'));
  (postgresUrl ? describe : describe.skip)(`${title} [postgres]`, () => body('postgres'));
}
