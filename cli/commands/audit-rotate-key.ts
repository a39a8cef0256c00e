// `audit rotate-key`: a new audit checkpoint signing key for the gateway whose database the
// command is pointed at (--data-dir, else DATABASE_URL, else AGENT_GATEWAY_DATA_DIR), sealed with
// the same master key the gateway uses (AGENT_GATEWAY_MASTER_KEY, else the data directory's key
// file). The key it replaces is retired and stays published (GET /api/v1/audit/checkpoint/key,
// the DID documents), so the checkpoints it signed still verify. On PostgreSQL a running control
// plane signs with the new key from its next cut and cuts every tenant's checkpoint again under
// it within a few seconds; the embedded database must be free (stop the gateway first). Prints
// the new verifier key on stdout: what auditors (and, later, witnesses) must learn.
import type { Command } from 'commander';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

export function registerAuditRotateKey(audit: Command): void {
  audit
    .command('rotate-key')
    .description(
      'Make a new audit checkpoint signing key and retire the current one (still published, so ' +
        'its checkpoints verify). Prints the new verifier key.',
    )
    .option(
      '--data-dir <dir>',
      'the embedded database (default: DATABASE_URL, else AGENT_GATEWAY_DATA_DIR)',
    )
    .addHelpText(
      'after',
      [
        '',
        'The master key is the one the gateway uses: AGENT_GATEWAY_MASTER_KEY, else the key file',
        'in the data directory. On PostgreSQL run it while gateways run: the control plane signs',
        'with the new key from its next checkpoint. The embedded database must not be in use.',
        'Give auditors the new verifier key (docs/audit.md, "Checkpoints").',
        '',
        'Exit codes: 0 rotated, 1 failed (one line names the cause), 2 usage error.',
      ].join('\n'),
    )
    .exitOverride((error) => {
      process.exit(error.code.startsWith('commander.help') ? error.exitCode : EXIT_USAGE);
    })
    .action(async (flags: { dataDir?: string }) => {
      process.exitCode = await runRotate(flags);
    });
}

async function runRotate(flags: { dataDir?: string }): Promise<number> {
  const { formatErrorLine } = await import('../../shared/errors/index.js');
  const { openStoredDatabase } = await import('../open-stored-database.js');
  let stored: Awaited<ReturnType<typeof openStoredDatabase>> | undefined;
  try {
    const { loadConfig } = await import('../../runtime/config.js');
    const { readMasterKey } = await import('../../runtime/master-key.js');
    const { KeyCustody } = await import('../../control-plane/services/agentiam/custody.js');
    const { rotateAuditKey, checkSealedAuditKey } = await import(
      '../../control-plane/audit/signing-key.js'
    );
    const config = loadConfig();
    const dataDir = flags.dataDir ?? config.dataDir;
    const masterKey = await readMasterKey({ masterKey: config.masterKey, dataDir });
    if (masterKey === undefined) {
      process.stderr.write(
        `audit rotate-key: no master key: set AGENT_GATEWAY_MASTER_KEY to the gateway's, or point --data-dir at the data directory holding its master-key file\n`,
      );
      return EXIT_FAILED;
    }
    stored = await openStoredDatabase(flags.dataDir, 'audit rotate-key');
    // The same master key as the gateway's, or the new key would be sealed where it cannot open it.
    await checkSealedAuditKey(stored.db, masterKey.key, masterKey.source);
    const custody = new KeyCustody();
    custody.useMasterKey(masterKey.key, masterKey.source);
    const { key, retired } = await rotateAuditKey(stored.db, custody);
    process.stdout.write(`${key.verifierKey}\n`);
    process.stderr.write(
      `audit rotate-key: new audit key ${key.id} in ${stored.db.location}; retired ${retired.id} (${retired.verifierKey}), still published so its checkpoints verify. Give auditors the new verifier key.\n`,
    );
    return EXIT_OK;
  } catch (error) {
    process.stderr.write(`${formatErrorLine(error)}\n`);
    return EXIT_FAILED;
  } finally {
    await stored?.db.close().catch(() => {});
  }
}
