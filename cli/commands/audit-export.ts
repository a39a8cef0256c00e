// `audit export --tenant <id|name>`: streams one tenant's audit chain out of the database as the
// JSON array `audit verify` (and the NPL audit verifier) read. Storage is chosen like the
// gateway's: --data-dir, else DATABASE_URL (PostgreSQL, schema AGENT_GATEWAY_DB_SCHEMA; works while
// gateways run), else the embedded database in AGENT_GATEWAY_DATA_DIR (default ./data), which a
// running gateway holds exclusively: then the command says who holds it and never opens it.
// Read-only: it never migrates. Exit codes: 0 exported, 1 the export failed, 2 usage.
import type { Command } from 'commander';
// Type only: the command's code is loaded when it runs, so --help stays fast.
import type { ExportFlags } from './audit-export-run.js';

const EXIT_USAGE = 2;

export function registerAuditExport(audit: Command): void {
  audit
    .command('export')
    .description("Export a tenant's audit chain as a JSON array, the input of `audit verify`.")
    .requiredOption('--tenant <id|name>', 'the tenant whose chain to export')
    .option('--from <iso>', 'only entries created at or after this time (ISO 8601)')
    .option('--to <iso>', 'only entries created before this time (ISO 8601, exclusive)')
    .option('--output <file>', 'write to this file (replaced when complete) instead of stdout')
    .option(
      '--proofs <file>',
      "also write the proofs file: the tenant's latest signed checkpoint and the proofs that tie the export to it (`audit verify --proofs`)",
    )
    .option('--data-dir <dir>', 'the embedded database to read (default: AGENT_GATEWAY_DATA_DIR)')
    .addHelpText(
      'after',
      [
        '',
        'Storage: --data-dir, else DATABASE_URL (PostgreSQL; schema AGENT_GATEWAY_DB_SCHEMA,',
        'default public), else the embedded database in AGENT_GATEWAY_DATA_DIR (default ./data).',
        'The embedded database can be read only while no gateway runs on it; with PostgreSQL,',
        'export while gateways run. The command never migrates the database.',
        '',
        'A dated export is a slice of the chain: verify it with `audit verify --partial`, or',
        'with --after <hash of the entry before it>. Without dates the whole chain is exported',
        "up to the head committed when the export starts; the head's hash is printed on stderr.",
        '',
        "--proofs writes, beside the export (never inside it), the tenant's latest signed",
        'checkpoint and a consistency proof from the export to it, or for a slice the inclusion',
        'proof of its last entry covered by the checkpoint.',
        '',
        'Examples:',
        '  agent-gateway audit export --tenant default | agent-gateway audit verify -',
        '  agent-gateway audit export --tenant acme --from 2026-07-01 --to 2026-08-01 --output july.json',
        '  agent-gateway audit export --tenant acme --output a.json --proofs a.proofs.json',
        '',
        'Exit codes: 0 exported, 1 the export failed (one line names the cause), 2 usage error.',
      ].join('\n'),
    )
    .exitOverride((error) => {
      process.exit(error.code.startsWith('commander.help') ? error.exitCode : EXIT_USAGE);
    })
    .action(async (flags: ExportFlags) => {
      // Loaded on use: the storage stack must not slow down every other command.
      const { runAuditExport } = await import('./audit-export-run.js');
      process.exitCode = await runAuditExport(flags);
    });
}
