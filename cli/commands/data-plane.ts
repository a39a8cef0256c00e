// `agent-gateway data-plane --control-plane <url> --credential-file <file> [--name <n>]`: a data
// plane in a process of its own. It reads its configuration only from the control plane's stream
// (docs/config-push.md), starting from the snapshot it persisted last (<data dir>/last-snapshot.json)
// so it serves even while the control plane is away; it writes audit entries and approvals to the
// shared PostgreSQL database (DATABASE_URL), which it never reads configuration from.
// `agent-gateway data-plane register --name <n>` registers one and prints its credential once;
// `agent-gateway data-plane revoke --name <n>` revokes it (its open stream is closed within a
// heartbeat period, and it cannot reconnect).
import type { Command } from 'commander';
import { type GatewayConfig, loadConfig } from '../../runtime/config.js';
import { renderConfigHelp } from '../../runtime/config-docs.js';
import { writeSecretFile } from '../../runtime/secret-file.js';
import { formatErrorLine, gatewayError } from '../../shared/errors/index.js';
import type { Database } from '../../storage/engine/database.js';
import { loadServerCommands } from '../load-server-commands.js';
import type { DataPlaneOptions } from './data-plane-run.js';
import { requirePostgres } from './split-deployment.js';

export function registerDataPlaneCommand(program: Command): void {
  const command = program
    .command('data-plane')
    .description(
      'Start a data plane fed by a remote control plane (needs DATABASE_URL, shared with it). ' +
        '`data-plane register --name <n>` registers one and prints its credential.',
    )
    .option('--control-plane <url>', 'base URL of the control plane, e.g. http://10.0.0.5:8080')
    .option('--credential-file <file>', 'file holding the agdp_… credential of this data plane')
    .option('--name <name>', 'the name this data plane was registered with (checked)')
    .addHelpText('after', renderConfigHelp)
    .action(async (options: DataPlaneOptions) => {
      const { runDataPlane } = await loadServerCommands();
      process.exitCode = await runDataPlane(options);
    });
  command
    .command('register')
    .description('Register a data plane in the database and print its credential once.')
    .requiredOption('--name <name>', 'a unique name for the data plane')
    .option('--credential-file <file>', 'write the credential to this file (mode 0600) instead')
    .action(async (options: { name: string; credentialFile?: string }) => {
      process.exitCode = await runRegister(options);
    });
  command
    .command('revoke')
    .description(
      'Revoke a data plane: its credential is refused from now on and its open stream is closed.',
    )
    .requiredOption('--name <name>', 'the name the data plane was registered with')
    .action(async (options: { name: string }) => {
      process.exitCode = await runRevoke(options);
    });
}

async function runRevoke(options: { name: string }): Promise<number> {
  try {
    const config = loadConfig();
    requirePostgres(config, 'data-plane');
    const { revokeDataPlane } = await import('../../control-plane/stream/credentials.js');
    const plane = await withMigratedDatabase(config, (db) => revokeDataPlane(db, options.name));
    console.log(
      plane.alreadyRevoked
        ? `data plane "${plane.name}" (id ${plane.id}) was revoked already, at ${plane.revokedAt.toISOString()}`
        : `revoked data plane "${plane.name}" (id ${plane.id}) at ${plane.revokedAt.toISOString()}; ` +
            'its open stream closes within a heartbeat period (15 s)',
    );
    return 0;
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
}

async function runRegister(options: { name: string; credentialFile?: string }): Promise<number> {
  try {
    const config = loadConfig();
    requirePostgres(config, 'data-plane');
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(options.name)) {
      throw gatewayError('CONFIG_INVALID', {
        setting: `--name ${options.name}`,
        problem: 'expected letters, digits, ".", "_" or "-" (1 to 100)',
      });
    }
    const { registerDataPlane } = await import('../../control-plane/stream/credentials.js');
    const plane = await withMigratedDatabase(config, (db) => registerDataPlane(db, options.name));
    if (options.credentialFile) {
      await writeSecretFile(options.credentialFile, plane.credential);
      console.log(
        `registered data plane "${plane.name}" (id ${plane.id}); ` +
          `credential written to ${options.credentialFile}`,
      );
    } else {
      console.log(
        [
          `registered data plane "${plane.name}" (id ${plane.id}); its credential, shown only`,
          'this once (the control plane stores only its hash):',
          '',
          `    ${plane.credential}`,
          '',
          'Save it in a file (mode 0600) and pass --credential-file <file> to the data plane.',
        ].join('\n'),
      );
    }
    return 0;
  } catch (error) {
    console.error(formatErrorLine(error));
    return 1;
  }
}

/** Runs `fn` on the configured PostgreSQL database, migrated first, and closes it. */
async function withMigratedDatabase<T>(
  config: GatewayConfig,
  fn: (db: Database) => Promise<T>,
): Promise<T> {
  const { openDatabase } = await import('../../storage/engine/database.js');
  const { migrateDatabase } = await import('../../storage/engine/migrations.js');
  const db = await openDatabase({ url: config.databaseUrl, schema: config.databaseSchema });
  try {
    await migrateDatabase(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}
