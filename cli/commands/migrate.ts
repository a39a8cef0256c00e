// `agent-gateway migrate`: applies pending migrations and exits. `start` does the same on its own;
// this command is for deployments that migrate in a separate step (e.g. before a rolling update).
import type { Command } from 'commander';
import { loadConfig } from '../../runtime/config.js';
import { formatErrorLine } from '../../shared/errors/index.js';

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description(
      'Apply pending database migrations (to DATABASE_URL, or to the embedded database in ' +
        'AGENT_GATEWAY_DATA_DIR) and exit. Safe to run while other gateways start.',
    )
    .action(async () => {
      process.exitCode = await runMigrate();
    });
}

async function runMigrate(): Promise<number> {
  try {
    const config = loadConfig();
    const { openDatabase } = await import('../../storage/engine/database.js');
    const { migrateDatabase } = await import('../../storage/engine/migrations.js');
    const db = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.databaseUrl ? undefined : config.dataDir,
      schema: config.databaseSchema,
      lockOwner: { command: 'migrate' },
    });
    try {
      const result = await migrateDatabase(db);
      for (const name of result.applied) console.log(`applied ${name}`);
      console.log(
        `${db.location}: ${result.applied.length} migration(s) applied, ` +
          `${result.alreadyApplied} already applied`,
      );
      return 0;
    } finally {
      await db.close();
    }
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
}
