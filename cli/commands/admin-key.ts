// `admin-key reset --tenant <name>`: break-glass for an operator who has lost every key holding
// tenants:admin (the gateway refuses to revoke the last one, but keys expire and get lost). It
// mints a key of the tenant holding every scope, prints it once on stdout, stores only its hash
// and audits it as api_key.created (actor cli:admin-key reset). Other keys stay as they are.
// Storage is chosen like `audit export`'s: the embedded database only while no gateway runs on
// it (it takes gateway.lock), PostgreSQL (DATABASE_URL) while planes run: they pick the key up
// with their next snapshot. Exit codes: 0 minted, 1 failed, 2 usage.
import type { Command } from 'commander';
// Type only: the command's code is loaded when it runs, so --help stays fast.
import type { AdminKeyResetFlags } from './admin-key-reset-run.js';

const EXIT_USAGE = 2;

export function registerAdminKeyCommand(program: Command): void {
  const group = program
    .command('admin-key')
    .description('Break-glass access: recover administration when every admin key is lost.');
  group
    .command('reset')
    .description(
      'Mint a new API key holding every scope (tenants:admin included) for a tenant; print it once.',
    )
    .requiredOption('--tenant <name>', 'the tenant whose operators are locked out (name or id)')
    .option('--data-dir <dir>', 'the embedded database to use (default: AGENT_GATEWAY_DATA_DIR)')
    .addHelpText(
      'after',
      [
        '',
        'Run it on the gateway host as the operator who owns the data. The key is printed once on',
        'stdout (nothing else is), only its hash is stored, and the audit trail of the tenant gets',
        'an api_key.created entry marked breakGlass. Existing keys are left as they are.',
        '',
        'Storage: --data-dir, else DATABASE_URL (PostgreSQL; schema AGENT_GATEWAY_DB_SCHEMA,',
        'default public), else the embedded database in AGENT_GATEWAY_DATA_DIR (default ./data).',
        'Stop the gateway first when it uses the embedded database (the command takes its',
        'gateway.lock); with PostgreSQL run it while gateways run: they serve the key within a',
        'second or so. The first start names its tenant `default`.',
        '',
        'Example:',
        '  agent-gateway admin-key reset --tenant default > admin-key && chmod 600 admin-key',
        '',
        'Exit codes: 0 minted, 1 failed (one line names the cause), 2 usage error.',
      ].join('\n'),
    )
    .exitOverride((error) => {
      process.exit(error.code.startsWith('commander.help') ? error.exitCode : EXIT_USAGE);
    })
    .action(async (flags: AdminKeyResetFlags) => {
      // Loaded on use: the storage stack must not slow down every other command.
      const { runAdminKeyReset } = await import('./admin-key-reset-run.js');
      process.exitCode = await runAdminKeyReset(flags);
    });
}
