// Opens the gateway's database: embedded PGlite in a data directory (the default a new user
// gets) or a PostgreSQL server (DATABASE_URL). Both are exposed through one `Database`: a Prisma
// client for ordinary reads and writes, plus a small raw-SQL surface for the few places that need
// locks, multi-statement scripts or batched inserts (migrations, the audit chain).
//
// Invariants: a PGlite data directory is used by one process at a time (enforced with a lock file,
// see data-dir-lock.ts); a PostgreSQL database may be shared by many processes, and every query of
// ours runs in `schema` (default `public`), so tests can isolate themselves in a schema of their own.
import { mkdir } from 'node:fs/promises';
import { PGlite, type Transaction as PGliteTransaction } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../prisma/generated/client/client.js';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import { StorageError } from './errors.js';

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
  /** Runs `fn` in one transaction on one connection; rolls back if it throws. */
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
  /** Pool size for PostgreSQL. */
  readonly maxConnections?: number | undefined;
  /** Use this PGlite instance instead of opening one (tests, tools). */
  readonly pglite?: PGlite | undefined;
  /** What the process holding a PGlite data dir advertises in its lock file (e.g. its URL). */
  readonly lockOwner?: Readonly<Record<string, unknown>> | undefined;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url) return openPostgres(options.url, options);
  return openPGlite(options);
}

async function openPGlite(options: OpenDatabaseOptions): Promise<Database> {
  const { dataDir, lockOwner } = options;
  let lock: DataDirLock | undefined;
  if (dataDir !== undefined) {
    try {
      await mkdir(dataDir, { recursive: true });
    } catch (error) {
      throw new StorageError(
        'STORAGE_DATA_DIR_UNWRITABLE',
        `cannot create data directory ${dataDir}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    lock = await acquireDataDirLock(dataDir, lockOwner ?? {});
  }
  let client: PGlite;
  try {
    client =
      options.pglite ??
      (await PGlite.create(dataDir === undefined ? undefined : `${dataDir}/pgdata`));
    await client.query('select 1');
  } catch (error) {
    await lock?.release();
    throw new StorageError(
      'STORAGE_DATA_DIR_CORRUPT',
      `cannot open the embedded database in ${dataDir ?? 'memory'}: ${describeError(error)}`,
      { cause: error },
    );
  }
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(client) });
  const run = async <Row>(
    executor: PGlite | PGliteTransaction,
    text: string,
    params?: readonly unknown[],
  ): Promise<Row[]> => (await executor.query<Row>(text, params as unknown[] | undefined)).rows;
  return {
    kind: 'pglite',
    prisma,
    schema: 'public',
    location: dataDir === undefined ? 'PGlite (in memory)' : `PGlite in ${dataDir}`,
    query: (text, params) => run(client, text, params),
    async exec(script) {
      await client.exec(script);
    },
    async advertise(owner) {
      await lock?.update(owner);
    },
    transaction: (fn) =>
      client.transaction((tx) =>
        fn({
          query: (text, params) => run(tx, text, params),
          async exec(script) {
            await tx.exec(script);
          },
        }),
      ),
    async close() {
      await prisma.$disconnect();
      await client.close();
      await lock?.release();
    },
  };
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) {
    throw new StorageError('STORAGE_CONFIG_INVALID', `invalid PostgreSQL schema name "${schema}"`);
  }
  const location = describePostgresUrl(url, schema);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: 10_000,
    options: `-c search_path=${schema}`,
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  try {
    await pool.query(`create schema if not exists "${schema}"`);
  } catch (error) {
    await pool.end().catch(() => {});
    throw new StorageError(
      'STORAGE_UNREACHABLE',
      `cannot connect to PostgreSQL at ${location}: ${describeError(error)}`,
      { cause: error },
    );
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema }) });
  const run = async <Row>(
    executor: pg.Pool | pg.PoolClient,
    text: string,
    params?: readonly unknown[],
  ): Promise<Row[]> => (await executor.query(text, params as unknown[] | undefined)).rows as Row[];
  return {
    kind: 'postgres',
    prisma,
    schema,
    location,
    query: (text, params) => run(pool, text, params),
    async exec(script) {
      await pool.query(script);
    },
    async advertise() {},
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await fn({
          query: (text, params) => run(client, text, params),
          async exec(script) {
            await client.query(script);
          },
        });
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
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
