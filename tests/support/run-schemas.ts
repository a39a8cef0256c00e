// The PostgreSQL schemas of one `vitest run`: the global setup names the run, every schema a test
// creates (databases.ts, uniqueSchemaName) starts with that name, and the global teardown drops
// what is left of them: the migrated schemas test processes hand from test to test, and whatever a
// failed test did not drop. Kept apart from databases.ts, which warns or throws on import when
// DATABASE_URL is missing, for the global setup of any run (a unit-only one included).
import pg from 'pg';

/** Set by the global setup: every schema of this run starts with `t_<run id>_`. */
export const TEST_RUN_VARIABLE = 'AGENT_GATEWAY_TEST_RUN';

/** The prefix of the schemas of `run` (this process's run by default). */
export function runSchemaPrefix(run = process.env[TEST_RUN_VARIABLE] ?? 'norun'): string {
  return `t_${run}_`;
}

/** Drops every schema of the run `run` on the server at `url`. */
export async function dropRunSchemas(url: string, run: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      'select nspname as name from pg_namespace where starts_with(nspname, $1)',
      [runSchemaPrefix(run)],
    );
    for (const { name } of rows) await client.query(`drop schema if exists "${name}" cascade`);
  } finally {
    await client.end();
  }
}
