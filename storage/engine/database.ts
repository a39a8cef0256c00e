// Opens the gateway's database: embedded PGlite in a data directory (the default a new user
// gets) or a PostgreSQL server (DATABASE_URL). Both are reached the same way, through `pg` and
// Prisma's `@prisma/adapter-pg`: the embedded database is served over the PostgreSQL wire protocol
// on a unix socket by a worker thread (embedded-server.ts), so its synchronous query execution
// never blocks this thread. Both are exposed through one `Database`: a Prisma client for ordinary
// reads and writes, plus a small raw-SQL surface for the few places that need locks,
// multi-statement scripts or batched inserts (migrations, the audit chain).
//
// Invariants: a PGlite data directory is used by one process at a time (enforced with a lock file,
// see data-dir-lock.ts); the embedded server runs one transaction at a time, so code inside a
// transaction must never wait for another connection of the pool; a PostgreSQL database may be
// shared by many processes, and every query of ours runs in `schema` (default `public`), so tests
// can isolate themselves in a schema of their own.
import { mkdir } from 'node:fs/promises';
import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../../prisma/generated/client/client.js';
import { gatewayError } from '../../shared/errors/index.js';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import { PRIVATE_DIR_MODE } from './data-dir-permissions.js';
import { type EmbeddedServer, startEmbeddedServer } from './embedded-server.js';

export type DatabaseKind = 'pglite' | 'postgres';

/** A connection that can run parameterized SQL; a transaction is one too. */
export interface SqlExecutor {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs a multi-statement script (simple query protocol; `$$` bodies allowed). */
  exec(script: string): Promise<void>;
}

export interface Database extends SqlExecutor {
  readonly kind: DatabaseKind;
  readonly prisma: PrismaClient;
  /** Schema all tables live in (PostgreSQL); always `public` on PGlite. */
  readonly schema: string;
  /** Where the data is, without credentials: for logs and error messages. */
  readonly location: string;
  /**
   * Records what this process advertises (e.g. its URL) in the data directory's lock file, so
   * other commands can find the running gateway. No-op without a data directory.
   */
  advertise(owner: Readonly<Record<string, unknown>>): Promise<void>;
  /**
   * Runs `fn` in one transaction on one connection; rolls back if it throws. `fn` must use only
   * `tx`: on the embedded database another connection waits until this transaction ends.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL connection string; when absent the embedded PGlite database is used. */
  readonly url?: string | undefined;
  /** PGlite data directory; `undefined` with no url means an in-memory database (tests). */
  readonly dataDir?: string | undefined;
  /** PostgreSQL schema to use (created if missing). Default `public`. */
  readonly schema?: string | undefined;
  /** Pool size (connections to PostgreSQL or to the embedded server). Default 10. */
  readonly maxConnections?: number | undefined;
  /** Serve this PGlite instance on this thread instead of opening one (schema tooling). */
  readonly pglite?: PGlite | undefined;
  /**
   * An in-memory PGlite starts from this data-directory dump (a file `PGlite.dumpDataDir` wrote)
   * instead of an empty cluster: the test suite's one migrated template, loaded in about 0.3 s
   * where creating and migrating a cluster takes seconds (storage/pglite-template.ts).
   */
  readonly pgliteTemplate?: string | undefined;
  /** What the process holding a PGlite data dir advertises in its lock file (e.g. its URL). */
  readonly lockOwner?: Readonly<Record<string, unknown>> | undefined;
  /**
   * Reach this running in-memory embedded server instead of starting one; `close()` leaves it
   * running. The test suite hands one server to its tests one after another, emptied in between
   * (tests/support/databases.ts): starting one costs about a CPU-second.
   */
  readonly embeddedServer?: EmbeddedServer | undefined;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const DEFAULT_MAX_CONNECTIONS = 10;

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url) return openPostgres(options.url, options);
  return openPGlite(options);
}

async function openPGlite(options: OpenDatabaseOptions): Promise<Database> {
  const { dataDir, lockOwner } = options;
  const max = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  if (options.embeddedServer && dataDir === undefined) {
    return buildPGliteDatabase(options.embeddedServer, max, 'PGlite (in memory)', async () => {});
  }
  let lock: DataDirLock | undefined;
  if (dataDir !== undefined) {
    try {
      // Private from the start (data-dir-permissions.ts): a later umask cannot widen it.
      await mkdir(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    } catch (error) {
      throw gatewayError(
        'STORAGE_DATA_DIR_UNWRITABLE',
        { what: 'the data directory', path: dataDir, reason: (error as Error).message },
        { cause: error },
      );
    }
    lock = await acquireDataDirLock(dataDir, lockOwner ?? {});
  }
  let server: EmbeddedServer;
  try {
    server = await startEmbeddedServer({
      dataDir,
      pglite: options.pglite,
      template: dataDir === undefined ? options.pgliteTemplate : undefined,
      maxConnections: max,
    });
  } catch (error) {
    await lock?.release();
    throw error;
  }
  return buildPGliteDatabase(
    server,
    max,
    dataDir === undefined ? 'PGlite (in memory)' : `PGlite in ${dataDir}`,
    async () => {
      await server.close();
      await lock?.release();
    },
    async (owner) => {
      await lock?.update(owner);
    },
  );
}

function buildPGliteDatabase(
  server: EmbeddedServer,
  max: number,
  location: string,
  release: () => Promise<void>,
  advertise: Database['advertise'] = async () => {},
): Database {
  const pool = new pg.Pool({
    host: server.host,
    port: server.port,
    user: 'postgres',
    database: 'postgres',
    max,
    connectionTimeoutMillis: 10_000,
  });
  pool.on('error', () => {});
  return buildDatabase({
    kind: 'pglite',
    pool,
    schema: 'public',
    location,
    embedded: server,
    advertise,
    release,
  });
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) {
    throw gatewayError('STORAGE_CONFIG_INVALID', { schema: JSON.stringify(schema) });
  }
  const location = describePostgresUrl(url, schema);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    connectionTimeoutMillis: 10_000,
    options: `-c search_path=${schema}`,
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  try {
    await createSchemaIfMissing(pool, schema);
  } catch (error) {
    await pool.end().catch(() => {});
    throw gatewayError(
      'STORAGE_UNREACHABLE',
      { location, reason: describeError(error) },
      { cause: error },
    );
  }
  return buildDatabase({
    kind: 'postgres',
    pool,
    schema,
    location,
    embedded: null,
    async advertise() {},
    async release() {},
  });
}

/**
 * `create schema if not exists` is not safe against itself: two processes starting at once can
 * both pass the existence check and one then fails on pg_namespace's unique index (23505) or with
 * duplicate_schema (42P06). Either means the schema now exists, which is all we asked for.
 */
async function createSchemaIfMissing(pool: pg.Pool, schema: string): Promise<void> {
  try {
    await pool.query(`create schema if not exists "${schema}"`);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== '23505' && code !== '42P06') throw error;
  }
}

interface DatabaseParts {
  readonly kind: DatabaseKind;
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly location: string;
  readonly embedded: EmbeddedServer | null;
  advertise(owner: Readonly<Record<string, unknown>>): Promise<void>;
  /** After the pool has ended: stop the embedded server, release the lock. */
  release(): Promise<void>;
}

function buildDatabase(parts: DatabaseParts): Database {
  const { pool, embedded } = parts;
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema: parts.schema }) });
  // A connection-level error from the embedded server is reported as what it is when its thread
  // died: STORAGE_EMBEDDED_STOPPED with the reason, not "Connection terminated".
  const explain = async (error: unknown): Promise<never> => {
    if (embedded !== null && !isSqlError(error)) {
      const failure = embedded.failure ?? (await embedded.checkAlive());
      if (failure !== null) throw failure;
    }
    throw error;
  };
  const run = async <Row>(
    executor: pg.Pool | pg.PoolClient,
    text: string,
    params?: readonly unknown[],
  ): Promise<Row[]> => {
    if (embedded?.failure) throw embedded.failure;
    try {
      return (await executor.query(text, params as unknown[] | undefined)).rows as Row[];
    } catch (error) {
      return explain(error);
    }
  };
  const connect = async (): Promise<pg.PoolClient> => {
    if (embedded?.failure) throw embedded.failure;
    try {
      return await pool.connect();
    } catch (error) {
      return explain(error);
    }
  };
  let closing: Promise<void> | null = null;
  return {
    kind: parts.kind,
    prisma,
    schema: parts.schema,
    location: parts.location,
    query: (text, params) => run(pool, text, params),
    async exec(script) {
      await run(pool, script);
    },
    advertise: parts.advertise,
    async transaction(fn) {
      const client = await connect();
      try {
        await run(client, 'begin');
        const result = await fn({
          query: (text, params) => run(client, text, params),
          async exec(script) {
            await run(client, script);
          },
        });
        await run(client, 'commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close() {
      closing ??= (async () => {
        await prisma.$disconnect();
        await pool.end();
        await parts.release();
      })();
      return closing;
    },
  };
}

/** An error the server reported for a statement (it has a SQLSTATE), not a transport failure. */
function isSqlError(error: unknown): boolean {
  return error instanceof pg.DatabaseError;
}

/** host:port/database (schema s), never the password. */
export function describePostgresUrl(url: string, schema = 'public'): string {
  try {
    const parsed = new URL(url);
    const database = parsed.pathname.replace(/^\//, '') || '(default database)';
    return `${parsed.hostname}:${parsed.port || '5432'}/${database} (schema ${schema})`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return describeError(error.errors[0]);
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
