// `agent-gateway token-key rotate`: gives a process serving the data plane (`start`, or a
// `data-plane`) a new access-token signing key (runtime/token-signing-key.ts). The key belongs to
// the data directory (AGENT_GATEWAY_DATA_DIR) of the process, so the command runs where that
// directory is, with the process's own settings: on DATABASE_URL the running process switches to
// the new key with the next configuration snapshot (about a second); on the embedded database
// the gateway must be stopped (the command takes gateway.lock) and signs with the new key when it
// starts again. Either way the retired key stays in the JWKS until the tokens it signed have
// expired. Separate from `rotateSigningKey` (GraphQL), which rotates a tenant's CA key.
import type { Command } from 'commander';
import { loadConfig } from '../../runtime/config.js';
import { formatErrorLine } from '../../shared/errors/index.js';

export function registerTokenKeyCommand(program: Command): void {
  const command = program
    .command('token-key')
    .description(
      'Manage the access-token signing key of the data plane whose data directory is ' +
        'AGENT_GATEWAY_DATA_DIR (see `token-key rotate --help`).',
    );
  command
    .command('rotate')
    .description(
      'Make a new access-token signing key for the data directory AGENT_GATEWAY_DATA_DIR and ' +
        'retire the old one. On DATABASE_URL a running process switches within a snapshot ' +
        '(about a second); on the embedded database stop the gateway first, it signs with the ' +
        'new key from its next start. The JWKS keeps the retired key until every token it ' +
        'signed has expired (15 minutes, plus 1 minute for the switch).',
    )
    .action(async () => {
      process.exitCode = await runRotate();
    });
}

async function runRotate(): Promise<number> {
  try {
    const config = loadConfig();
    const { openDatabase } = await import('../../storage/engine/database.js');
    const { migrateDatabase } = await import('../../storage/engine/migrations.js');
    const { rotateTokenSigningKey } = await import('../../runtime/token-signing-key.js');
    const { makeDataDirPrivate } = await import('../../storage/engine/data-dir-permissions.js');
    await makeDataDirPrivate(config.dataDir);
    // The embedded database: taking its lock refuses (STORAGE_DATA_DIR_IN_USE) while it runs.
    const db = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.databaseUrl ? undefined : config.dataDir,
      schema: config.databaseSchema,
      lockOwner: { command: 'token-key rotate' },
    });
    try {
      await migrateDatabase(db);
      const rotation = await rotateTokenSigningKey(db, config.dataDir);
      console.log(
        [
          `new token signing key ${rotation.kid} written to ${rotation.file}`,
          rotation.previousKid === null
            ? 'there was no key before'
            : `retired key ${rotation.previousKid}: the JWKS keeps it until the tokens it signed have expired`,
          config.databaseUrl
            ? 'a running process using this data directory switches with its next configuration snapshot'
            : 'the gateway signs with the new key from its next start',
        ].join('\n'),
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
