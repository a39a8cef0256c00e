// Runs storage tests against both databases the gateway supports: an in-memory PGlite and, when
// DATABASE_URL is set, a real PostgreSQL server in a schema of the test's own (dropped after).
// Without DATABASE_URL the PostgreSQL variants are skipped with a visible message; under CI a
// missing DATABASE_URL is an error, so the real-server path cannot silently stop being tested.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe } from 'vitest';
import { type Database, openDatabase } from '../../storage/engine/database.js';
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
  // An in-memory PGlite starts from one of the suite's templates (pglite-template.ts).
  const template = migrate ? process.env[PGLITE_TEMPLATE_VARIABLE] : emptyPGliteTemplate();
  const db = await openDatabase(
    kind === 'postgres' ? { url: postgresUrl, schema } : { pgliteTemplate: template },
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
    },
  };
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
